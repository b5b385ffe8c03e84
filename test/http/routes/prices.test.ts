import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { ownAccountId } from '../../../src/billing/accounts.js';
import { assertEnvelope, createTestApp, eventually, json, type TestContext } from '../../support/helper.js';

describe('prices per endpoint (PRICES) and per key', () => {
  let context: TestContext;
  let authorization: string;
  before(async () => {
    context = await createTestApp({ settings: { prices: { '/query': 3, '/document': 1, '/face/search': 5 } } });
    authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('pricing', false)).token}`;
  });
  after(async () => context.close());

  const query = (key: string, idempotencyKey?: string) =>
    context.app.inject({
      method: 'POST',
      url: '/query',
      headers: { 'x-api-key': key, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      payload: { query: 'breach' },
    });
  const fetchDocument = (key: string) => context.app.inject({ url: '/document', headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' } });
  const audit = async (keyId: string) => (await context.store.ledger.auditLedger()).find((ledger) => ledger.accountId === ownAccountId(keyId));
  const create = async (credits: number) =>
    json(await context.app.inject({ method: 'POST', url: '/admin/keys', headers: { authorization }, payload: { credits } }));

  it('charges each endpoint its price, says so in x-credits-charged, and never takes part of one (402)', async () => {
    const key = await create(7);
    const first = await query(key.key);
    assert.deepEqual([first.statusCode, first.headers['x-credits-charged'], first.headers['x-credits-remaining']], [200, '3', '4']);
    assert.equal((await query(key.key)).headers['x-credits-remaining'], '1');
    const refused = assertEnvelope(await query(key.key), 402, /costs 3 credits/);
    assert.equal(refused.status, 402);
    const cheap = await fetchDocument(key.key);
    assert.deepEqual([cheap.statusCode, cheap.headers['x-credits-charged'], cheap.headers['x-credits-remaining']], [200, '1', '0']);
    assert.deepEqual(await audit(key.id), { accountId: ownAccountId(key.id), granted: 7, charged: 7, expired: 0, balance: 0, consistent: true });
  });

  it('serves exactly the requests a balance covers under concurrency, mixing prices, and the ledger adds up', async () => {
    const key = await create(100);
    const answers = await Promise.all(Array.from({ length: 80 }, (_, index) => (index % 2 === 0 ? query(key.key) : fetchDocument(key.key))));
    const paid = answers.filter((answer) => answer.statusCode === 200).map((answer) => Number(answer.headers['x-credits-charged']));
    const balance = json(await context.app.inject({ url: '/credits', headers: { 'x-api-key': key.key } })).current_balance ?? 0;
    assert.equal(
      paid.reduce((sum, credits) => sum + credits, 0),
      100 - balance,
    );
    assert.ok(balance < 3, `what is left (${balance}) buys no more /query`);
    assert.equal((await audit(key.id))?.consistent, true);
  });

  it("takes a key's own prices first (PATCH /admin/keys/{id}), and PRICES again once they are cleared", async () => {
    const key = await create(1000);
    const patch = (payload: unknown) =>
      context.app.inject({ method: 'PATCH', url: `/admin/keys/${key.id}`, headers: { authorization }, payload: payload as object });
    const patched = json(await patch({ prices: { '/query': 1 } }));
    assert.deepEqual(patched.prices, { '/query': 1 });
    const log = json(await context.app.inject({ url: '/admin/audit-log?limit=1', headers: { authorization } })).entries;
    assert.deepEqual([log[0].action, log[0].actor, log[0].detail.prices], ['keys.update', 'pricing', { '/query': 1 }]);
    // Keys are identified from a memory of at most a second: the change applies within it.
    const charged = (credits: string) =>
      eventually(async () => {
        assert.equal((await query(key.key)).headers['x-credits-charged'], credits);
      });
    await charged('1');
    assert.deepEqual(json(await patch({ prices: null })).prices, null);
    await charged('3');
    for (const bad of [{ prices: { '/nope': 1 } }, { prices: { '/query': 0 } }, { prices: { '/query': '2' } }, {}, { low_balance_threshold: -1 }]) {
      assertEnvelope(await patch(bad), 400);
    }
    assertEnvelope(
      await context.app.inject({ method: 'PATCH', url: '/admin/keys/key_0000000000000000', headers: { authorization }, payload: { prices: null } }),
      404,
    );
  });

  it('says a replay charged nothing (x-credits-charged: 0)', async () => {
    const key = await create(10);
    assert.equal((await query(key.key, 'once')).headers['x-credits-charged'], '3');
    const replay = await query(key.key, 'once');
    assert.deepEqual(
      [replay.headers['idempotent-replayed'], replay.headers['x-credits-charged'], replay.headers['x-credits-remaining']],
      ['true', '0', '7'],
    );
  });
});

describe('usage with prices', () => {
  it('puts first the keys that spent the most credits, not the most requests', async () => {
    const context = await createTestApp({ settings: { prices: { '/query': 3 } } });
    try {
      const authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('finance', true)).token}`;
      const [searcher, reader] = [await context.createKey(100), await context.createKey(100)];
      for (let request = 0; request < 2; request++) {
        await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': searcher }, payload: { query: 'breach' } });
      }
      for (let request = 0; request < 5; request++) {
        await context.app.inject({ url: '/document', headers: { 'x-api-key': reader, 'svc-doc-id': 'gdpr-17' } });
      }
      const top = json(await context.app.inject({ url: '/admin/usage', headers: { authorization } })).top_keys;
      assert.deepEqual(
        top.map((entry: { charges: number; credits: number }) => [entry.charges, entry.credits]),
        [
          [2, 6],
          [5, 5],
        ],
      );
    } finally {
      await context.close();
    }
  });
});

describe('a price for highlights (PRICES "/query:highlight")', () => {
  let context: TestContext;
  before(async () => {
    context = await createTestApp({ settings: { prices: { '/query': 1, '/document': 1, '/face/search': 1, '/query:highlight': 2 } } });
  });
  after(async () => context.close());

  it("charges a lexical query asking for highlights that price, and one without them the endpoint's", async () => {
    const key = await context.createKey(10);
    const ask = (payload: Record<string, unknown>) => context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload });
    assert.equal((await ask({ query: 'breach', highlight: true })).headers['x-credits-charged'], '2');
    assert.equal((await ask({ query: 'breach', fields: ['jurisdiction'] })).headers['x-credits-charged'], '1', 'fields alone are free');
    assert.equal((await ask({ query: 'breach' })).headers['x-credits-charged'], '1');
    assert.equal(await context.balanceOf(key), 6);
  });
});
