import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { BillingUpkeep } from '../../../src/billing/upkeep.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

/** A key's own end and the operator's metadata on it. Runs on both stores. */
describe('admin API: key expiry and metadata', () => {
  let context: TestContext;
  let authorization: string;
  let now = Date.parse('2031-05-01T10:00:00.000Z');
  const clock = () => now;
  before(async () => {
    context = await createTestApp({ clock });
    authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('operator', false)).token}`;
  });
  after(async () => context.close());

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    context.app.inject({ method, url, headers: { authorization }, ...(payload && { payload }) });
  const asCaller = (key: string, method: 'GET' | 'POST', url: string) =>
    context.app.inject({
      method,
      url,
      headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' },
      ...(method === 'POST' && { payload: { query: 'data' } }),
    });

  it('refuses a key after its end like a disabled one, uncharged, and sends key.expired once, carrying its metadata', async () => {
    const created = json(
      await call('POST', '/admin/keys', { credits: 10, expires_at: '2031-05-01T11:00:00Z', metadata: { customer: 'cus_42', plan: 'trial' } }),
    );
    assert.deepEqual([created.expires_at, created.metadata], ['2031-05-01T11:00:00.000Z', { customer: 'cus_42', plan: 'trial' }]);
    assert.equal((await asCaller(created.key, 'POST', '/query')).statusCode, 200);
    const upkeep = new BillingUpkeep(context.store.ledger, clock);
    assert.deepEqual((await upkeep.runOnce()).keysEnded, [], 'not before its end');

    now = Date.parse('2031-05-01T11:00:00.000Z');
    for (const [method, url] of [
      ['GET', '/credits'],
      ['POST', '/query'],
      ['GET', '/document'],
      ['GET', '/usage'],
    ] as const) {
      assertEnvelope(await asCaller(created.key, method, url), 403, /expired at 2031-05-01T11:00:00.000Z/);
    }
    assert.equal(json(await call('GET', `/admin/keys/${created.id}`)).balance, 9, 'nothing charged after its end');
    assert.deepEqual((await upkeep.runOnce()).keysEnded, [{ keyId: created.id, expiredAt: '2031-05-01T11:00:00.000Z' }]);
    assert.deepEqual((await upkeep.runOnce()).keysEnded, [], 'announced once');
    const events = json(await call('GET', `/admin/keys/${created.id}/events`)).events as Array<{ type: string; data: Record<string, unknown> }>;
    const ended = events.filter((event) => event.type === 'key.expired');
    assert.equal(ended.length, 1);
    assert.deepEqual(ended[0]?.data, {
      account_id: created.account_id,
      key_id: created.id,
      balance: 9,
      expired_at: '2031-05-01T11:00:00.000Z',
      metadata: { customer: 'cus_42', plan: 'trial' },
    });

    const extended = json(await call('PATCH', `/admin/keys/${created.id}`, { expires_at: '2031-06-01T00:00:00Z' }));
    assert.equal(extended.expires_at, '2031-06-01T00:00:00.000Z');
    assert.equal((await asCaller(created.key, 'GET', '/credits')).statusCode, 200, 'a later end makes it work again');
    now = Date.parse('2031-06-01T00:00:01.000Z');
    assert.equal((await upkeep.runOnce()).keysEnded.length, 1, 'a new end is announced again');
    const forever = json(await call('PATCH', `/admin/keys/${created.id}`, { expires_at: null, metadata: null }));
    assert.deepEqual([forever.expires_at, forever.metadata], [null, null]);
    assert.equal((await asCaller(created.key, 'GET', '/credits')).statusCode, 200);
  });

  it('refuses an end that is not in the future and metadata over 4 KB (400), changing nothing', async () => {
    const past = await call('POST', '/admin/keys', { credits: 1, expires_at: '2020-01-01T00:00:00Z' });
    assertEnvelope(past, 400, /expires_at must be later than now/);
    const created = json(await call('POST', '/admin/keys', { credits: 1, metadata: { small: true } }));
    assertEnvelope(
      await call('PATCH', `/admin/keys/${created.id}`, { metadata: { blob: 'x'.repeat(5000) } }),
      400,
      /metadata is \d+ bytes as JSON; it may hold at most 4096/,
    );
    assertEnvelope(await call('PATCH', `/admin/keys/${created.id}`, { metadata: ['not', 'an', 'object'] }), 400, /metadata/);
    assert.deepEqual(json(await call('GET', `/admin/keys/${created.id}`)).metadata, { small: true });
  });
});
