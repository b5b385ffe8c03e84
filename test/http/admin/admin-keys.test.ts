import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { ownAccountId } from '../../../src/billing/accounts.js';
import { IdempotencyService } from '../../../src/idempotency/idempotency-service.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

describe('admin API: keys', () => {
  let context: TestContext;
  let authorization: string;
  before(async () => {
    context = await createTestApp({ idempotency: { lockMs: 50 } });
    const { token } = await new AdminTokens(context.store.admin).create('billing', false);
    authorization = `Bearer ${token}`;
  });
  after(async () => context.close());

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    context.app.inject({ method, url, headers: { authorization, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const create = async (credits: number, name = 'acme') => json(await call('POST', '/admin/keys', { credits, name }));

  it('creates a key that works at once; the plain key is shown only then', async () => {
    const response = await call('POST', '/admin/keys', { credits: 7, name: 'acme', rate: 20 });
    assert.equal(response.statusCode, 201);
    const created = json(response);
    assert.match(created.key, /^[0-9a-f]{64}$/);
    assert.equal(created.account_id, ownAccountId(created.id), 'an account of its own');
    assert.deepEqual(
      { ...created, key: undefined, id: undefined, created_at: undefined, account_id: undefined },
      {
        key: undefined,
        id: undefined,
        created_at: undefined,
        account_id: undefined,
        name: 'acme',
        balance: 7,
        status: 'active',
        rate: 20,
        prices: null,
        low_balance_threshold: null,
        expires_at: null,
        metadata: null,
        spend_caps: null,
      },
    );
    const credits = await context.app.inject({ url: '/credits', headers: { 'x-api-key': created.key } });
    assert.equal(json(credits).current_balance, 7);
    const shown = json(await call('GET', `/admin/keys/${created.id}`));
    assert.equal(shown.key, undefined);
    assert.ok(!JSON.stringify(json(await call('GET', '/admin/keys'))).includes(created.key));
  });

  it('refuses bad bodies with 400 naming the field, never coercing', async () => {
    assertEnvelope(await call('POST', '/admin/keys', { credits: '5' }), 400, /credits/);
    assertEnvelope(await call('POST', '/admin/keys', { credits: -1 }), 400, /credits/);
    assertEnvelope(await call('POST', '/admin/keys', { credits: 1, extra: true }), 400);
    assertEnvelope(await call('GET', '/admin/keys?limit=0'), 400, /limit/);
    assertEnvelope(await call('GET', '/admin/keys?cursor=nonsense'), 400, /cursor/);
  });

  it('lists keys newest first, a page at a time, filtered by status and name', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) ids.push((await create(1, 'paged')).id);
    await call('POST', `/admin/keys/${ids[1]}/disable`);
    const seen: Array<{ id: string; created_at: string }> = [];
    let cursor: string | null = null;
    do {
      const query: string = `/admin/keys?limit=2&name=paged${cursor ? `&cursor=${cursor}` : ''}`;
      const page = json(await call('GET', query));
      assert.ok(page.keys.length <= 2);
      seen.push(...page.keys);
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(seen.map((key) => key.id).sort(), [...ids].sort(), 'every key once');
    // Newest first; keys created in the same millisecond in descending id order.
    const order = seen.map((key) => `${key.created_at} ${key.id}`);
    assert.deepEqual(order, [...order].sort().reverse());
    const disabled = json(await call('GET', '/admin/keys?status=disabled&name=paged')).keys.map((key: { id: string }) => key.id);
    assert.deepEqual(disabled, [ids[1]]);
  });

  it('shows a key with its last use and its charges by endpoint; 404 for an unknown id', async () => {
    const created = await create(5);
    for (const docId of ['gdpr-17', 'missing']) {
      await context.app.inject({ url: '/document', headers: { 'x-api-key': created.key, 'svc-doc-id': docId } });
    }
    await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': created.key }, payload: { query: 'breach' } });
    const shown = json(await call('GET', `/admin/keys/${created.id}`));
    assert.equal(shown.balance, 2);
    assert.deepEqual(shown.charges_by_endpoint, { '/document': 2, '/query': 1 });
    assert.ok(Date.parse(shown.last_used_at) > Date.now() - 60_000);
    assertEnvelope(await call('GET', '/admin/keys/key_0000000000000000'), 404);
  });

  it('tops up, and a retried top-up with the same Idempotency-Key grants once', async () => {
    const created = await create(1);
    const topUp = (credits: number, idempotencyKey: string) =>
      call('POST', `/admin/keys/${created.id}/topup`, { credits, reference: 'inv-1' }, { 'idempotency-key': idempotencyKey });
    const answers = await Promise.all(Array.from({ length: 6 }, () => topUp(10, 'payment-1')));
    const statuses = answers.map((answer) => answer.statusCode).sort();
    assert.ok(
      statuses.every((status) => status === 200 || status === 409),
      `statuses ${statuses}`,
    );
    assert.equal(json(await call('GET', `/admin/keys/${created.id}`)).balance, 11, 'granted once');
    const replay = await topUp(10, 'payment-1');
    assert.equal(replay.statusCode, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(json(replay), { id: created.id, balance: 11 });
    assertEnvelope(await topUp(20, 'payment-1'), 422);
    assert.deepEqual(json(await topUp(5, 'payment-2')), { id: created.id, balance: 16 });
  });

  it('grants once when the first attempt granted and died before answering: its retry takes over the claim', async () => {
    const created = await create(1);
    const body = { credits: 10 };
    // The first attempt as it was when the process died: its claim taken, its grant committed, no answer kept.
    const claim = await context.store.idempotency.claim({
      keyHash: 'admin',
      idempotencyKey: 'payment-9',
      fingerprint: IdempotencyService.fingerprint({ method: 'POST', path: '/admin/keys/:id/topup', docId: created.id, body }),
      lockMs: 50,
      ttlMs: 60_000,
    });
    assert.equal(claim.outcome, 'claimed');
    const granted = await context.store.ledger.topUp(created.id, 10, { idempotencyRef: (claim as { ref: string }).ref });
    assert.equal(granted.outcome, 'topped-up');
    await new Promise((resolve) => setTimeout(resolve, 60));

    const retry = await call('POST', `/admin/keys/${created.id}/topup`, body, { 'idempotency-key': 'payment-9' });
    assert.deepEqual(json(retry), { id: created.id, balance: 11 });
    assert.equal(json(await call('GET', `/admin/keys/${created.id}`)).balance, 11, 'granted once');
    const replay = await call('POST', `/admin/keys/${created.id}/topup`, body, { 'idempotency-key': 'payment-9' });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal((await context.store.ledger.listGrants(ownAccountId(created.id))).filter((grant) => grant.reason === 'topup').length, 1);
  });

  it('refuses top-ups to unknown and revoked keys and past the limit, granting nothing', async () => {
    const created = await create(1);
    assertEnvelope(await call('POST', '/admin/keys/key_0000000000000000/topup', { credits: 5 }), 404);
    assertEnvelope(await call('POST', `/admin/keys/${created.id}/topup`, { credits: 1_000_000_000_000 }), 422, /Nothing was added/);
    await call('POST', `/admin/keys/${created.id}/revoke`);
    assertEnvelope(await call('POST', `/admin/keys/${created.id}/topup`, { credits: 5 }), 409, /revoked/);
    assert.equal(json(await call('GET', `/admin/keys/${created.id}`)).balance, 1);
  });

  it('disables, enables and revokes as the CLI does; a revoked key stays revoked', async () => {
    const created = await create(3);
    const credits = () => context.app.inject({ url: '/credits', headers: { 'x-api-key': created.key } });
    assert.equal(json(await call('POST', `/admin/keys/${created.id}/disable`)).changed, true);
    assertEnvelope(await credits(), 403);
    assert.equal(json(await call('POST', `/admin/keys/${created.id}/disable`)).changed, false);
    assert.equal(json(await call('POST', `/admin/keys/${created.id}/enable`)).status, 'active');
    assert.equal((await credits()).statusCode, 200);
    assert.equal(json(await call('POST', `/admin/keys/${created.id}/revoke`)).status, 'revoked');
    assertEnvelope(await call('POST', `/admin/keys/${created.id}/enable`), 409);
    assertEnvelope(await credits(), 403);
  });

  it("sets a key's rate, or returns it to the default with null", async () => {
    const created = await create(3);
    assert.equal(json(await call('PUT', `/admin/keys/${created.id}/rate`, { rate: 7 })).rate, 7);
    assert.equal(json(await call('PUT', `/admin/keys/${created.id}/rate`, { rate: null })).rate, null);
    assertEnvelope(await call('PUT', `/admin/keys/${created.id}/rate`, { rate: '7' }), 400, /rate/);
    assertEnvelope(await call('PUT', '/admin/keys/key_0000000000000000/rate', { rate: 1 }), 404);
  });

  it('records every change in the audit log with the token as actor and the request id', async () => {
    const created = await create(2, 'audited');
    const topUp = await call('POST', `/admin/keys/${created.id}/topup`, { credits: 3, reference: 'inv-9' });
    const entries = json(await call('GET', '/admin/audit-log?limit=2')).entries;
    assert.deepEqual(
      entries.map((entry: { action: string; target: string; actor: string }) => [entry.action, entry.target, entry.actor]),
      [
        ['keys.topup', created.id, 'billing'],
        ['keys.create', created.id, 'billing'],
      ],
    );
    assert.equal(entries[0].request_id, topUp.headers['x-request-id']);
    assert.deepEqual(entries[0].detail, { credits: 3, balance: 5, reference: 'inv-9', expires_at: null });
  });
});
