import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, eventually, json, type TestContext } from '../../support/helper.js';

describe('usage over time', () => {
  let context: TestContext;
  let authorization: string;
  let spender: { id: string; key: string };
  let other: { id: string; key: string };
  before(async () => {
    context = await createTestApp();
    authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('dashboard', true)).token}`;
    const admin = await new AdminTokens(context.store.admin).create('billing', false);
    const create = async (credits: number): Promise<{ id: string; key: string }> => {
      const response = await context.app.inject({
        method: 'POST',
        url: '/admin/keys',
        headers: { authorization: `Bearer ${admin.token}` },
        payload: { credits },
      });
      const { id, key } = json(response);
      return { id, key };
    };
    spender = await create(10);
    other = await create(10);
    for (const docId of ['gdpr-17', 'gdpr-33', 'missing']) {
      await context.app.inject({ url: '/document', headers: { 'x-api-key': spender.key, 'svc-doc-id': docId } });
    }
    await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': spender.key }, payload: { query: 'breach' } });
    await context.app.inject({ url: '/document', headers: { 'x-api-key': other.key, 'svc-doc-id': 'ccpa' } });
  });
  after(async () => context.close());

  const get = (url: string, headers: Record<string, string> = {}) => context.app.inject({ url, headers: { authorization, ...headers } });

  it("counts a key's charges by day, endpoint and final status, equal to the charges recorded", async () => {
    await eventually(async () => {
      const usage = json(await get(`/admin/keys/${spender.id}/usage`));
      assert.equal(usage.totals.count, await context.store.ledger.countCharges(spender.id));
      assert.deepEqual(usage.totals.by_endpoint, { '/document': 3, '/query': 1 });
      const today = `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`;
      assert.deepEqual(
        usage.series.map((row: { start: string; endpoint: string; status: number; count: number }) => [
          row.start,
          row.endpoint,
          row.status,
          row.count,
        ]),
        [
          [today, '/document', 200, 2],
          [today, '/document', 404, 1],
          [today, '/query', 200, 1],
        ],
      );
    });
  });

  it('cuts hours, gives CSV when asked, and refuses spans it cannot answer', async () => {
    const hourly = json(await get(`/admin/keys/${spender.id}/usage?bucket=hour`));
    assert.ok(hourly.series.every((row: { start: string }) => row.start.endsWith(':00:00.000Z')));
    const csv = await get(`/admin/keys/${spender.id}/usage`, { accept: 'text/csv' });
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.equal(csv.body.split('\n')[0], 'start,endpoint,status,count,credits');
    assert.equal(csv.body.trim().split('\n').length, 4);
    assertEnvelope(await get(`/admin/keys/${spender.id}/usage?bucket=week`), 400, /bucket/);
    assertEnvelope(await get(`/admin/keys/${spender.id}/usage?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z`), 400, /before/);
    assertEnvelope(await get(`/admin/keys/${spender.id}/usage?bucket=hour&from=2026-01-01T00:00:00Z&to=2026-11-01T00:00:00Z`), 400, /31 days/);
    assertEnvelope(await get(`/admin/keys/${spender.id}/usage?from=yesterday`), 400, /from/);
    assertEnvelope(await get('/admin/keys/key_0000000000000000/usage'), 404);
  });

  it('sums every key, with the keys that paid the most first', async () => {
    const usage = json(await get('/admin/usage'));
    assert.equal(usage.totals.count, 5);
    assert.deepEqual(
      usage.top_keys.map((entry: { id: string; charges: number; credits: number }) => [entry.id, entry.charges, entry.credits]),
      [
        [spender.id, 4, 4],
        [other.id, 1, 1],
      ],
    );
  });

  it("shows a caller its own usage by day, free, and never another key's", async () => {
    const response = await context.app.inject({ url: '/usage', headers: { 'x-api-key': other.key } });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(json(response).days, [{ date: new Date().toISOString().slice(0, 10), endpoint: '/document', count: 1 }]);
    assert.equal(response.headers['x-credits-remaining'], undefined);
    assert.equal((await context.store.ledger.findKeyById(other.id))?.balance, 9, 'not charged');
    assertEnvelope(await context.app.inject({ url: '/usage' }), 400);
  });
});
