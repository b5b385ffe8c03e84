import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

/** Spend caps set through the admin API, met by callers: 429, uncharged, refused before the handler. Runs on both stores. */
describe('admin API: spend caps', () => {
  let context: TestContext;
  let authorization: string;
  const now = Date.parse('2037-03-04T22:00:00.000Z');
  before(async () => {
    context = await createTestApp({ clock: () => now });
    authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('operator', false)).token}`;
  });
  after(async () => context.close());

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    context.app.inject({ method, url, headers: { authorization }, ...(payload && { payload }) });
  const query = (key: string) =>
    context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query: 'personal data' } });

  it('refuses a request that would pass a cap with 429, Retry-After until the period ends and the balance, uncharged', async () => {
    const created = json(await call('POST', '/admin/keys', { credits: 50, spend_caps: [{ credits: 2, interval: 'day' }] }));
    assert.deepEqual(created.spend_caps, [{ credits: 2, interval: 'day' }]);
    assert.equal((await query(created.key)).statusCode, 200);
    assert.equal((await query(created.key)).statusCode, 200);
    const refused = await query(created.key);
    const body = assertEnvelope(
      refused,
      429,
      /spent 2 of its cap of 2 credits a day; the cap resets at 2037-03-05T00:00:00.000Z\. Nothing was charged/,
    );
    assert.equal(body.resp, undefined, 'refused before the handler');
    assert.equal(refused.headers['retry-after'], String(2 * 3600));
    assert.equal(refused.headers['x-credits-remaining'], '48');
    const shown = json(await call('GET', `/admin/keys/${created.id}`));
    assert.equal(shown.balance, 48);
    assert.deepEqual(shown.cap_spend, [{ credits: 2, interval: 'day', spent: 2, resets_at: '2037-03-05T00:00:00.000Z' }]);
    assert.equal((await context.app.inject({ url: '/credits', headers: { 'x-api-key': created.key } })).statusCode, 200, '/credits is free');
    const events = json(await call('GET', `/admin/keys/${created.id}/events`)).events as Array<{ type: string; data: Record<string, unknown> }>;
    assert.deepEqual(
      events.filter((event) => event.type === 'credits.cap_reached').map((event) => [event.data.cap, event.data.resets_at]),
      [[{ credits: 2, interval: 'day' }, '2037-03-05T00:00:00.000Z']],
    );

    const lifted = json(await call('PATCH', `/admin/keys/${created.id}`, { spend_caps: [{ credits: 10, interval: 'month' }] }));
    assert.deepEqual(lifted.spend_caps, [{ credits: 10, interval: 'month' }]);
    assert.equal((await query(created.key)).statusCode, 200, 'a changed cap applies at once on this instance');
    assert.equal(json(await call('PATCH', `/admin/keys/${created.id}`, { spend_caps: null })).spend_caps, null);
  });

  it('refuses two caps of one interval, and caps that are not whole credits of a known interval (400)', async () => {
    const created = json(await call('POST', '/admin/keys', { credits: 5 }));
    const twice = [
      { credits: 1, interval: 'day' },
      { credits: 2, interval: 'day' },
    ];
    assertEnvelope(await call('PATCH', `/admin/keys/${created.id}`, { spend_caps: twice }), 400, /one cap per interval/);
    assertEnvelope(await call('PATCH', `/admin/keys/${created.id}`, { spend_caps: [{ credits: 0, interval: 'day' }] }), 400, /credits/);
    assertEnvelope(await call('PATCH', `/admin/keys/${created.id}`, { spend_caps: [{ credits: 5, interval: 'year' }] }), 400, /interval/);
    assert.equal(json(await call('GET', `/admin/keys/${created.id}`)).spend_caps, null);
  });
});
