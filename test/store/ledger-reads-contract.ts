import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashApiKey } from '../../src/billing/keys.js';
import { MAX_BALANCE } from '../../src/billing/ledger.js';
import type { Store } from '../../src/store/store.js';

const EVER = { from: '1970-01-01T00:00:00.000Z', to: '9999-01-01T00:00:00.000Z' };

/**
 * The ledger's account operations, key listings, key ends and reports, as each store promises
 * them directly (the HTTP suites reach them too, through the routes).
 */
export function ledgerReadsContract(storeOf: () => Store): void {
  let sequence = 0;
  const newKey = async (credits: number, extra: { accountId?: string; name?: string; expiresAt?: string } = {}) => {
    sequence++;
    const plain = sequence.toString(16).padStart(64, 'f');
    const record = await storeOf().ledger.createKey({
      keyHash: hashApiKey(plain),
      id: `key_reads${sequence}`,
      name: extra.name ?? `reads ${sequence}`,
      credits,
      ...(extra.accountId ? { account: { accountId: extra.accountId } } : {}),
      ...(extra.expiresAt ? { expiresAt: extra.expiresAt } : {}),
    });
    return { hash: hashApiKey(plain), record };
  };

  describe('ledger: accounts, listings and reports', () => {
    it('tops an account up once per idempotency ref, sets its refill plan, and lists its keys and their charges', async () => {
      const { ledger } = storeOf();
      const accountId = `acct_reads${++sequence}`;
      assert.equal((await ledger.createAccount({ id: accountId, name: 'reads', credits: 0 })).outcome, 'created');
      const first = await newKey(0, { accountId });
      const second = await newKey(0, { accountId });
      assert.deepEqual(
        (await ledger.accountKeys(accountId)).map((key) => key.id),
        [first.record.id, second.record.id],
        'oldest first',
      );
      const topped = await ledger.topUpAccount(accountId, 5, { idempotencyRef: `reads-${accountId}` });
      assert.deepEqual([topped.outcome, topped.outcome === 'topped-up' && topped.account.balance], ['topped-up', 5]);
      const again = await ledger.topUpAccount(accountId, 5, { idempotencyRef: `reads-${accountId}` });
      assert.deepEqual([again.outcome, again.outcome === 'granted-before' && again.account.balance], ['granted-before', 5]);
      assert.deepEqual(await ledger.topUpAccount('acct_none', 5), { outcome: 'not-found' });
      assert.equal((await ledger.topUpAccount(accountId, MAX_BALANCE)).outcome, 'over-limit');
      const refill = await ledger.setAccountRefill(accountId, { credits: 10, interval: 'month', mode: 'add' }, new Date().toISOString());
      assert.deepEqual([refill.outcome, refill.outcome === 'set' && refill.balance], ['set', 15], 'the first period is granted at once');
      assert.equal((await ledger.refillRule(accountId))?.credits, 10);
      assert.deepEqual(await ledger.setAccountRefill('acct_none', null, new Date().toISOString()), { outcome: 'not-found' });
      assert.equal((await ledger.debit(first.hash, '/query')).outcome, 'charged');
      assert.equal((await ledger.debit(second.hash, '/document', { cost: 2 })).outcome, 'charged');
      assert.deepEqual(
        (await ledger.accountCharges(accountId, 10)).map((charge) => [charge.keyId, charge.endpoint, charge.credits]),
        [
          [second.record.id, '/document', 2],
          [first.record.id, '/query', 1],
        ],
        'newest first',
      );
      assert.equal((await ledger.findAccount(accountId))?.balance, 12);
    });

    it("reports a key's activity, its usage by bucket and endpoint, and the top spenders", async () => {
      const { ledger } = storeOf();
      const { hash, record } = await newKey(10);
      for (const [endpoint, cost] of [
        ['/query', 1],
        ['/query', 1],
        ['/document', 3],
      ] as const) {
        assert.equal((await ledger.debit(hash, endpoint, { cost })).outcome, 'charged');
      }
      const activity = await ledger.keyActivity(record.id);
      assert.deepEqual(activity.chargesByEndpoint, { '/query': 2, '/document': 1 });
      assert.ok(activity.lastUsedAt !== null && Date.parse(activity.lastUsedAt) <= Date.now());
      const rows = await ledger.usage({ keyId: record.id, ...EVER, bucket: 'day' });
      const byEndpoint = Object.fromEntries(rows.map((row) => [row.endpoint, [row.count, row.credits]]));
      assert.deepEqual(byEndpoint, { '/document': [1, 3], '/query': [2, 2] });
      assert.ok(
        rows.every((row) => row.start.endsWith('T00:00:00.000Z')),
        'day buckets start at midnight UTC',
      );
      const top = await ledger.topSpenders(EVER.from, EVER.to, 1000);
      assert.deepEqual(
        top.find((row) => row.keyId === record.id),
        { keyId: record.id, name: record.name, charges: 3, credits: 5 },
      );
      assert.deepEqual(await ledger.keyActivity('key_none'), { lastUsedAt: null, chargesByEndpoint: {} });
    });

    it('pages keys newest first, neither overlapping nor skipping, by name, status and balance', async () => {
      const { ledger } = storeOf();
      const prefix = `pager-${++sequence}`;
      const made = [];
      for (const credits of [1, 5, 9]) made.push((await newKey(credits, { name: `${prefix} ${credits}` })).record);
      const first = await ledger.listKeysPage({ limit: 2, cursor: null, nameContains: prefix.toUpperCase() });
      assert.equal(first.keys.length, 2);
      assert.ok(first.nextCursor);
      const second = await ledger.listKeysPage({ limit: 2, cursor: first.nextCursor, nameContains: prefix });
      assert.equal(second.nextCursor, null);
      assert.deepEqual([...first.keys, ...second.keys].map((key) => key.id).sort(), made.map((key) => key.id).sort());
      const created = [...first.keys, ...second.keys].map((key) => key.createdAt);
      assert.deepEqual(created, [...created].sort().reverse(), 'newest first');
      await ledger.setKeyStatus(made[1].id, 'disabled');
      assert.deepEqual(
        (await ledger.listKeysPage({ limit: 10, cursor: null, nameContains: prefix, status: 'disabled' })).keys.map((key) => key.id),
        [made[1].id],
      );
      assert.deepEqual(
        (await ledger.listKeysPage({ limit: 10, cursor: null, nameContains: prefix, maxBalance: 5 })).keys.map((key) => key.id).sort(),
        [made[0].id, made[1].id].sort(),
      );
    });

    it('announces each key whose end has come once, and not one whose end is ahead', async () => {
      const { ledger } = storeOf();
      const ended = await newKey(1, { expiresAt: '2020-01-01T00:00:00.000Z' });
      const ahead = await newKey(1, { expiresAt: '2999-01-01T00:00:00.000Z' });
      const now = new Date().toISOString();
      const announced = await ledger.announceExpiredKeys(now, 1000);
      assert.deepEqual(
        announced.filter((end) => end.keyId === ended.record.id || end.keyId === ahead.record.id).map((end) => end.keyId),
        [ended.record.id],
      );
      assert.equal(
        (await ledger.announceExpiredKeys(now, 1000)).some((end) => end.keyId === ended.record.id),
        false,
        'once',
      );
    });
  });
}
