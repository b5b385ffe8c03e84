import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

describe('admin API: rolling a key', () => {
  let context: TestContext;
  let authorization: string;
  let now = Date.parse('2026-03-01T12:00:00.000Z');
  before(async () => {
    context = await createTestApp({ clock: () => now });
    authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('security', false)).token}`;
  });
  after(async () => context.close());

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    context.app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const create = async (credits: number) => json(await call('POST', '/admin/keys', { credits, name: 'rolled' }));
  const roll = (id: string, graceSeconds: unknown) => call('POST', `/admin/keys/${id}/roll`, { grace_seconds: graceSeconds });
  const fetchDocument = (key: string) => context.app.inject({ url: '/document', headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' } });
  const credits = (key: string) => context.app.inject({ url: '/credits', headers: { 'x-api-key': key } });

  it('gives a new key for the same id, balance and history; the old key works until the grace period ends, then 401', async () => {
    const created = await create(10);
    assert.equal((await fetchDocument(created.key)).statusCode, 200);
    const response = await roll(created.id, 60);
    assert.equal(response.statusCode, 200);
    const rolled = json(response);
    assert.match(rolled.key, /^[0-9a-f]{64}$/);
    assert.notEqual(rolled.key, created.key);
    assert.deepEqual(
      { id: rolled.id, balance: rolled.balance, status: rolled.status, valid_until: rolled.old_key_valid_until },
      { id: created.id, balance: 9, status: 'active', valid_until: '2026-03-01T12:01:00.000Z' },
    );

    // Inside the grace period both keys spend the one balance.
    assert.equal((await fetchDocument(created.key)).headers['x-credits-remaining'], '8');
    assert.equal((await fetchDocument(rolled.key)).headers['x-credits-remaining'], '7');
    assert.equal(json(await credits(created.key)).current_balance, 7);
    now += 59_000;
    assert.equal((await fetchDocument(created.key)).statusCode, 200);

    now += 1_000;
    assertEnvelope(await fetchDocument(created.key), 401);
    assertEnvelope(await credits(created.key), 401);
    assert.equal(json(await credits(rolled.key)).current_balance, 6, 'the refused requests took nothing');
    const shown = json(await call('GET', `/admin/keys/${created.id}`));
    assert.deepEqual(shown.charges_by_endpoint, { '/document': 4 }, 'charges made with either key are the one key history');
  });

  it('with no grace period, refuses the old key at once, even on routes that identify keys from memory', async () => {
    const created = await create(5);
    assert.equal((await fetchDocument(created.key)).statusCode, 200);
    const rolled = json(await roll(created.id, 0));
    assert.equal(rolled.old_key_valid_until, null);
    assertEnvelope(await fetchDocument(created.key), 401);
    assertEnvelope(await credits(created.key), 401);
    assert.equal((await fetchDocument(rolled.key)).headers['x-credits-remaining'], '3');
  });

  it('keeps each former key valid for its own grace period when a key is rolled twice', async () => {
    const first = await create(5);
    const second = json(await roll(first.id, 100));
    now += 50_000;
    const third = json(await roll(first.id, 100));
    for (const key of [first.key, second.key, third.key]) assert.equal((await credits(key)).statusCode, 200);
    now += 50_000;
    assertEnvelope(await credits(first.key), 401);
    assert.equal((await credits(second.key)).statusCode, 200);
    now += 50_000;
    assertEnvelope(await credits(second.key), 401);
    assert.equal((await credits(third.key)).statusCode, 200);
  });

  it('keeps a rolled key disabled or revoked as it was; a revoked key cannot be rolled (409)', async () => {
    const disabled = await create(5);
    await call('POST', `/admin/keys/${disabled.id}/disable`);
    const rolled = json(await roll(disabled.id, 60));
    assert.equal(rolled.status, 'disabled');
    assertEnvelope(await fetchDocument(rolled.key), 403);
    assertEnvelope(await fetchDocument(disabled.key), 403);

    const revoked = await create(5);
    await call('POST', `/admin/keys/${revoked.id}/revoke`);
    assertEnvelope(await roll(revoked.id, 60), 409, /revoked/);
    assertEnvelope(await fetchDocument(revoked.key), 403);
  });

  it('refuses a missing, mistyped or out-of-range grace period (400 naming it) and an unknown id (404)', async () => {
    const created = await create(5);
    for (const grace of [undefined, '60', -1, 604_801, 1.5]) {
      const response = grace === undefined ? await call('POST', `/admin/keys/${created.id}/roll`, {}) : await roll(created.id, grace);
      assertEnvelope(response, 400, /grace_seconds/);
    }
    assert.equal((await credits(created.key)).statusCode, 200, 'the key was not rolled');
    assertEnvelope(await roll('key_0000000000000000', 60), 404);
  });

  it('records the roll in the audit log; a read-only token cannot roll (403)', async () => {
    const created = await create(5);
    await roll(created.id, 30);
    const entries = json(await call('GET', '/admin/audit-log?limit=5')).entries as Array<Record<string, any>>;
    const entry = entries.find((candidate) => candidate.action === 'keys.roll' && candidate.target === created.id);
    assert.equal(entry?.actor, 'security');
    assert.equal(entry?.detail.grace_seconds, 30);
    assert.ok(!JSON.stringify(entries).includes(created.key), 'no plain key in the log');

    const reader = (await new AdminTokens(context.store.admin).create('viewer', true)).token;
    const refused = await context.app.inject({
      method: 'POST',
      url: `/admin/keys/${created.id}/roll`,
      headers: { authorization: `Bearer ${reader}` },
      payload: { grace_seconds: 0 },
    });
    assertEnvelope(refused, 403, /read-only/);
    assert.equal((await credits(created.key)).statusCode, 200);
  });
});
