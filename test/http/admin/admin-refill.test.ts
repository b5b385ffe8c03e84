import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { ownAccountId } from '../../../src/billing/accounts.js';
import { BillingUpkeep } from '../../../src/billing/upkeep.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

describe('admin API: refill plans', () => {
  let context: TestContext;
  let authorization: string;
  let now = Date.parse('2026-07-31T12:00:00.000Z');
  const clock = () => now;
  before(async () => {
    context = await createTestApp({ clock });
    authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('plans', false)).token}`;
  });
  after(async () => context.close());

  const call = (method: 'GET' | 'PUT' | 'DELETE' | 'POST', url: string, payload?: unknown) =>
    context.app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('grants the first month at once, each later month once, and shows the plan on the key', async () => {
    const key = json(await call('POST', '/admin/keys', { credits: 0 }));
    const set = await call('PUT', `/admin/keys/${key.id}/refill`, { credits: 1000, interval: 'month', mode: 'replace' });
    assert.deepEqual(json(set), {
      id: key.id,
      balance: 1000,
      refill: { credits: 1000, interval: 'month', mode: 'replace', next_refill_at: '2026-08-31T12:00:00.000Z' },
      granted: 1000,
    });
    await call('POST', `/admin/keys/${key.id}/topup`, { credits: 50 });
    const upkeep = new BillingUpkeep(context.store.ledger, clock);
    now = Date.parse('2026-08-31T12:00:00.000Z');
    const first = await upkeep.runOnce();
    assert.deepEqual(
      [first.expired.map((expiry) => expiry.amount), first.refilled],
      [[1000], [{ accountId: ownAccountId(key.id), credits: 1000, planned: 1000, balance: 1050 }]],
      "last month's plan credits leave, this month's arrive, the top-up stays",
    );
    assert.deepEqual((await upkeep.runOnce()).refilled, []);
    now = Date.parse('2026-12-01T00:00:00.000Z');
    assert.equal((await upkeep.runOnce()).refilled.length, 1, 'after three months away, one refill');
    const shown = json(await call('GET', `/admin/keys/${key.id}`));
    assert.deepEqual(shown.refill, { credits: 1000, interval: 'month', mode: 'replace', next_refill_at: '2026-12-31T12:00:00.000Z' });
    assert.equal(shown.balance, 1050);
    assert.equal((await context.store.ledger.auditLedger()).find((ledger) => ledger.accountId === ownAccountId(key.id))?.consistent, true);

    assert.deepEqual(json(await call('DELETE', `/admin/keys/${key.id}/refill`)).refill, null);
    assert.equal(json(await call('GET', `/admin/keys/${key.id}`)).refill, null);
    const log = json(await call('GET', '/admin/audit-log?limit=10')).entries as Array<{ actor: string; action: string; target: string; detail: any }>;
    const plans = log.filter((entry) => entry.action === 'keys.refill' && entry.target === key.id);
    assert.deepEqual(
      plans.map((entry) => [entry.actor, entry.detail.plan?.mode ?? null, entry.detail.granted]),
      [
        ['plans', null, 0],
        ['plans', 'replace', 1000],
      ],
    );
  });

  it('refuses a plan without its mode, with a wrong interval or credits (400 naming the field), for an unknown (404) or revoked key (409)', async () => {
    const key = json(await call('POST', '/admin/keys', { credits: 0 }));
    assertEnvelope(await call('PUT', `/admin/keys/${key.id}/refill`, { credits: 10, interval: 'day' }), 400, /mode/);
    assertEnvelope(await call('PUT', `/admin/keys/${key.id}/refill`, { credits: 10, interval: 'hour', mode: 'add' }), 400, /interval/);
    assertEnvelope(await call('PUT', `/admin/keys/${key.id}/refill`, { credits: 0, interval: 'day', mode: 'add' }), 400, /credits/);
    assertEnvelope(await call('PUT', '/admin/keys/key_0000000000000000/refill', { credits: 1, interval: 'day', mode: 'add' }), 404);
    await call('POST', `/admin/keys/${key.id}/revoke`);
    assertEnvelope(await call('PUT', `/admin/keys/${key.id}/refill`, { credits: 1, interval: 'day', mode: 'add' }), 409);
    assert.equal(json(await call('GET', `/admin/keys/${key.id}`)).balance, 0);
  });
});
