import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, eventually, json, type TestContext } from '../../support/helper.js';

/** The admin reads a console needs: who is signed in, the corpus size, keys found by name or balance, a key's charges and events, credits spent. */
describe('admin reads', () => {
  let context: TestContext;
  let writer: string;
  let reader: string;
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, authorization = reader, payload?: object) =>
    context.app.inject({ method, url, headers: { authorization }, ...(payload ? { payload } : {}) });
  const createKey = async (name: string, credits: number) => json(await call('POST', '/admin/keys', writer, { name, credits }));

  before(async () => {
    context = await createTestApp();
    const tokens = new AdminTokens(context.store.admin);
    writer = `Bearer ${(await tokens.create('billing', false)).token}`;
    reader = `Bearer ${(await tokens.create('dashboard', true)).token}`;
  });
  after(async () => context.close());

  it('GET /admin/token names the token and says whether it is read-only; an unknown token is 401', async () => {
    assert.deepEqual((({ name, read_only }) => ({ name, read_only }))(json(await call('GET', '/admin/token', reader))), {
      name: 'dashboard',
      read_only: true,
    });
    assert.equal(json(await call('GET', '/admin/token', writer)).read_only, false);
    assertEnvelope(await call('GET', '/admin/token', `Bearer msadmin_${'0'.repeat(64)}`), 401);
    assertEnvelope(await context.app.inject({ url: '/admin/token' }), 401);
  });

  it('GET /admin/documents counts the documents, following an ingest and a delete', async () => {
    const before = json(await call('GET', '/admin/documents')).count;
    assert.equal(before, await context.store.documents.countDocuments());
    const added = await context.app.inject({
      method: 'POST',
      url: '/admin/documents',
      headers: { authorization: writer, 'content-type': 'application/x-ndjson' },
      payload: '{"doc_id":"count-a","title":"A","text":"alpha"}\n{"doc_id":"count-b","title":"B","text":"beta"}\n',
    });
    assert.equal(added.statusCode, 200);
    assert.equal(json(await call('GET', '/admin/documents')).count, before + 2);
    await context.app.inject({ method: 'DELETE', url: '/admin/documents/count-a', headers: { authorization: writer } });
    assert.equal(json(await call('GET', '/admin/documents')).count, before + 1);
  });

  it('GET /admin/keys finds keys by part of their name, whatever its case, and by balance at most', async () => {
    await createKey('Acme Search', 500);
    await createKey('acme-staging', 3);
    await createKey('Globex', 2);
    const names = async (query: string) =>
      json(await call('GET', `/admin/keys?${query}`))
        .keys.map((key: { name: string }) => key.name)
        .sort();
    assert.deepEqual(await names('name_contains=ACME'), ['Acme Search', 'acme-staging']);
    assert.deepEqual(await names('max_balance=3'), ['Globex', 'acme-staging']);
    assert.deepEqual(await names('name_contains=acme&max_balance=3'), ['acme-staging']);
    assert.deepEqual(await names('name_contains=initech'), []);
    assertEnvelope(await call('GET', '/admin/keys?max_balance=-1'), 400, /max_balance/);
    assertEnvelope(await call('GET', '/admin/keys?name_contains='), 400, /name_contains/);
  });

  it("GET /admin/keys/{id}/charges pages a key's charges newest first, with their status and price", async () => {
    const key = await createKey('pager', 100);
    await call('PATCH', `/admin/keys/${key.id}`, writer, { prices: { '/query': 3 } });
    for (const docId of ['gdpr-17', 'missing', 'gdpr-33']) {
      await context.app.inject({ url: '/document', headers: { 'x-api-key': key.key, 'svc-doc-id': docId } });
    }
    await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key.key }, payload: { query: 'breach' } });
    await eventually(async () => {
      const first = json(await call('GET', `/admin/keys/${key.id}/charges?limit=3`));
      assert.deepEqual(
        first.charges.map((charge: { endpoint: string; status: number; credits: number }) => [charge.endpoint, charge.status, charge.credits]),
        [
          ['/query', 200, 3],
          ['/document', 200, 1],
          ['/document', 404, 1],
        ],
      );
      const second = json(await call('GET', `/admin/keys/${key.id}/charges?limit=3&cursor=${first.next_cursor}`));
      assert.deepEqual(
        second.charges.map((charge: { endpoint: string; status: number }) => [charge.endpoint, charge.status]),
        [['/document', 200]],
      );
      assert.equal(second.next_cursor, null);
    });
    const usage = json(await call('GET', `/admin/keys/${key.id}/usage`));
    assert.deepEqual({ count: usage.totals.count, credits: usage.totals.credits }, { count: 4, credits: 6 }, 'credits spent are the prices');
    assert.equal(usage.series.find((row: { endpoint: string }) => row.endpoint === '/query').credits, 3);
    const all = json(await call('GET', '/admin/usage'));
    assert.equal(
      all.totals.credits,
      all.series.reduce((sum: number, row: { credits: number }) => sum + row.credits, 0),
    );
    assertEnvelope(await call('GET', `/admin/keys/${key.id}/charges?cursor=abc`), 400, /cursor/);
    assertEnvelope(await call('GET', '/admin/keys/key_0000000000000000/charges'), 404);
  });

  it("GET /admin/keys/{id}/events lists the key's own billing events, newest first", async () => {
    const key = await createKey('events', 1);
    const bystander = await createKey('bystander', 1);
    await context.app.inject({ url: '/document', headers: { 'x-api-key': key.key, 'svc-doc-id': 'gdpr-17' } });
    await call('POST', `/admin/keys/${key.id}/topup`, writer, { credits: 5 });
    await eventually(async () => {
      const events = json(await call('GET', `/admin/keys/${key.id}/events`)).events;
      assert.deepEqual(
        events.map((event: { type: string; data: { key_id: string } }) => [event.type, event.data.key_id]),
        [
          ['credits.granted', key.id],
          ['credits.depleted', key.id],
        ],
      );
    });
    assert.deepEqual(json(await call('GET', `/admin/keys/${bystander.id}/events`)).events, []);
    assertEnvelope(await call('GET', '/admin/keys/key_0000000000000000/events'), 404);
  });
});
