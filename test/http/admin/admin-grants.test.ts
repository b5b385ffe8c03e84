import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { ownAccountId } from '../../../src/billing/accounts.js';
import { BillingUpkeep } from '../../../src/billing/upkeep.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

describe('admin API: grants that expire', () => {
  let context: TestContext;
  let authorization: string;
  let now = Date.parse('2026-05-01T09:00:00.000Z');
  const clock = () => now;
  before(async () => {
    context = await createTestApp({ clock });
    authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('billing', false)).token}`;
  });
  after(async () => context.close());

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    context.app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const credits = async (key: string) => json(await context.app.inject({ url: '/credits', headers: { 'x-api-key': key } }));
  const spend = (key: string) => context.app.inject({ url: '/document', headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' } });

  it('spends expiring credits first, shows them on /credits and the key, and takes what is left at expiry; audit stays exact', async () => {
    const created = json(await call('POST', '/admin/keys', { credits: 2 }));
    const topUp = await call('POST', `/admin/keys/${created.id}/topup`, { credits: 10, expires_at: '2026-05-01T12:00:00+02:00' });
    assert.deepEqual(json(topUp), { id: created.id, balance: 12 });
    const at = '2026-05-01T10:00:00.000Z';
    assert.deepEqual(await credits(created.key), {
      status: 200,
      message: '12 credits remaining.',
      current_balance: 12,
      expiring: [{ credits: 10, at }],
    });

    for (let request = 0; request < 3; request++) assert.equal((await spend(created.key)).statusCode, 200);
    assert.deepEqual((await credits(created.key)).expiring, [{ credits: 7, at }], 'the expiring credits were spent first');
    const shown = json(await call('GET', `/admin/keys/${created.id}`));
    assert.deepEqual(shown.expiring, [{ credits: 7, at }]);
    assert.deepEqual(
      shown.grants.map((grant: { credits: number; reason: string; expires_at: string | null }) => [grant.credits, grant.reason, grant.expires_at]),
      [
        [10, 'topup', at],
        [2, 'create', null],
      ],
    );

    const upkeep = new BillingUpkeep(context.store.ledger, clock);
    assert.deepEqual((await upkeep.runOnce()).expired, [], 'not yet');
    now = Date.parse(at);
    assert.deepEqual((await upkeep.runOnce()).expired, [{ accountId: ownAccountId(created.id), amount: 7, at, balance: 2 }]);
    assert.deepEqual(await credits(created.key), { status: 200, message: '2 credits remaining.', current_balance: 2 });
    const audit = (await context.store.ledger.auditLedger()).find((ledger) => ledger.accountId === ownAccountId(created.id));
    assert.deepEqual(audit, { accountId: ownAccountId(created.id), granted: 12, charged: 3, expired: 7, balance: 2, consistent: true });
  });

  it('refuses an expiry that is not later than now, or not a time, with 400 naming expires_at, granting nothing', async () => {
    const created = json(await call('POST', '/admin/keys', { credits: 1 }));
    for (const expiresAt of [new Date(now).toISOString(), '2020-01-01T00:00:00Z', 'tomorrow', 1_900_000_000]) {
      assertEnvelope(await call('POST', `/admin/keys/${created.id}/topup`, { credits: 5, expires_at: expiresAt }), 400, /expires_at/);
    }
    assert.equal((await credits(created.key)).current_balance, 1);
  });
});
