import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { hashApiKey } from '../../src/billing/keys.js';
import type { DebitResult } from '../../src/billing/ledger.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres-schema.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { createTestDatabase, PG_TEST_OPTIONS, refuseConnections, SKIP_POSTGRES } from '../support/pg.js';
import { storeContract } from './store-contract.js';

/** A store on a fresh database, and a client of its own on the same database. */
async function withStoreAndClient(work: (store: PostgresStore, client: pg.Client) => Promise<void>): Promise<void> {
  const database = await createTestDatabase();
  const store = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await work(store, client);
  } finally {
    await client.end();
    await store.close();
    await database.drop();
  }
}

if (SKIP_POSTGRES) {
  describe('Store contract: postgres', () => it('runs against a real PostgreSQL', { skip: SKIP_POSTGRES }, () => undefined));
} else {
  storeContract('postgres', async () => {
    const database = await createTestDatabase();
    const store = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await database.drop();
      },
    };
  });

  describe('postgres specifics', () => {
    it('debits many keys from several instances in overlapping batches, exactly', async () => {
      const database = await createTestDatabase();
      const stores = await Promise.all([1, 2, 3].map(() => PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS })));
      try {
        const admin = new KeyAdmin(stores[0].ledger);
        const keys = await Promise.all(Array.from({ length: 20 }, () => admin.create(50)));
        // Waves of ten keys each, in orders of their own, overlapping across instances: batches that
        // would deadlock if key rows were not locked in one order.
        const pending: Array<Promise<DebitResult>> = [];
        for (let wave = 0; wave < 300; wave++) {
          for (let slot = 0; slot < 10; slot++) {
            const key = keys[(wave * 13 + slot * 7) % keys.length];
            pending.push(stores[wave % stores.length].ledger.debit(hashApiKey(key.key), '/query'));
          }
          await new Promise((resolve) => setImmediate(resolve));
        }
        const results = await Promise.all(pending);
        assert.equal(results.filter((result) => result.outcome === 'charged').length, 1000);
        assert.equal(results.filter((result) => result.outcome === 'no-credits').length, 2000);
        for (const key of keys) {
          assert.equal((await stores[0].ledger.findKeyById(key.record.id))!.balance, 0);
          assert.equal(await stores[0].ledger.countCharges(key.record.id), 50);
        }
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await database.drop();
      }
    });

    it('serves exactly 100 of 3,000 concurrent requests over three instances on a cap of 100 a day, the rest capped and uncharged', async () => {
      const database = await createTestDatabase();
      const stores = await Promise.all([1, 2, 3].map(() => PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS })));
      try {
        const { record } = await new KeyAdmin(stores[0].ledger).create(1000, 'capped', null, { spendCaps: [{ credits: 100, interval: 'day' }] });
        const now = Date.parse('2036-07-01T12:00:00.000Z');
        const results = await Promise.all(
          Array.from({ length: 3000 }, (_, index) => (stores[index % 3] as PostgresStore).ledger.debitCapped(record.id, '/query', {}, now)),
        );
        assert.equal(results.filter((result) => result.outcome === 'charged').length, 100);
        assert.equal(results.filter((result) => result.outcome === 'capped').length, 2900);
        assert.equal((await stores[0].ledger.findKeyById(record.id))!.balance, 900);
        assert.equal(await stores[0].ledger.countCharges(record.id), 100);
        const reached = (await stores[0].webhooks.listEvents(100, record.id)).filter((event) => event.type === 'credits.cap_reached');
        assert.equal(reached.length, 1, 'credits.cap_reached once');
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await database.drop();
      }
    });

    it("announces each key's end once with three instances at work at the same moment, carrying its metadata", async () => {
      const database = await createTestDatabase();
      const stores = await Promise.all([1, 2, 3].map(() => PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS })));
      try {
        const admin = new KeyAdmin(stores[0].ledger);
        const keys = await Promise.all(
          Array.from({ length: 10 }, (_, index) =>
            admin.create(1, `k${index}`, null, { expiresAt: '2035-01-01T00:00:00.000Z', metadata: { n: index } }),
          ),
        );
        const ends = await Promise.all(stores.map((store) => store.ledger.announceExpiredKeys('2035-01-01T00:00:01.000Z', 100)));
        assert.deepEqual(
          ends
            .flat()
            .map((end) => end.keyId)
            .sort(),
          keys.map((key) => key.record.id).sort(),
          'each end once',
        );
        const events = (await stores[1].webhooks.listEvents(1000)).filter((event) => event.type === 'key.expired');
        assert.equal(events.length, 10);
        assert.deepEqual(
          events.map((event) => (event.data.metadata as { n: number }).n).sort((a, b) => a - b),
          [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        );
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await database.drop();
      }
    });

    it('refills, expires and crosses marks once with three instances at work at the same moment', async () => {
      const database = await createTestDatabase();
      const stores = await Promise.all([1, 2, 3].map(() => PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS, lowBalanceThreshold: 5 })));
      try {
        const keys = await Promise.all(Array.from({ length: 10 }, () => new KeyAdmin(stores[0].ledger).create(0)));
        const start = '2034-01-01T00:00:00.000Z';
        for (const key of keys) await stores[0].ledger.setRefill(key.record.id, { credits: 20, interval: 'day', mode: 'replace' }, start);
        for (let day = 1; day <= 3; day++) {
          const now = new Date(Date.parse(start) + day * 86_400_000).toISOString();
          const expired = await Promise.all(stores.map((store) => store.ledger.expireDue(now, 100)));
          const refilled = await Promise.all(stores.map((store) => store.ledger.refillDue(now, 100)));
          assert.equal(expired.flat().length, 10, `day ${day}: one expiry per key`);
          assert.equal(refilled.flat().length, 10, `day ${day}: one refill per key`);
        }
        // Twenty debits each, spread over the instances at once: one credits.low and one credits.depleted per key.
        await Promise.all(
          keys.flatMap((key) => Array.from({ length: 20 }, (_, index) => stores[index % 3].ledger.debit(hashApiKey(key.key), '/query'))),
        );
        const events = await stores[0].webhooks.listEvents(1000);
        for (const type of ['credits.low', 'credits.depleted']) {
          assert.equal(events.filter((event) => event.type === type).length, 10, type);
        }
        const audit = await stores[0].ledger.auditLedger();
        assert.ok(audit.every((ledger) => ledger.consistent && ledger.granted === 80 && ledger.expired === 60 && ledger.charged === 20));
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await database.drop();
      }
    });

    it('keeps request outcomes that cannot be written while PostgreSQL is away, and writes them once it is back', async () => {
      const database = await createTestDatabase();
      const store = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
      try {
        const key = await new KeyAdmin(store.ledger).create(10, 'outcomes');
        const charges: DebitResult[] = [];
        for (let i = 0; i < 3; i++) charges.push(await store.ledger.debit(hashApiKey(key.key), '/query'));
        const away = await refuseConnections(database.name);
        for (const charge of charges) if (charge.outcome === 'charged') store.ledger.recordOutcome(charge.chargeId, 200);
        // The flush runs into the refused connections.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await away.restore();
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const listed = await store.ledger.listCharges(key.record.id);
        assert.deepEqual(
          listed.map((charge) => charge.outcomeStatus),
          [200, 200, 200],
        );
      } finally {
        await store.close();
        await database.drop();
      }
    });

    it("charges a batch of one key's debits as it charges that key in a batch of several keys", () =>
      withStoreAndClient(async (store, client) => {
        const admin = new KeyAdmin(store.ledger);
        const [alone, shared, other, disabled] = await Promise.all([admin.create(2), admin.create(2), admin.create(5), admin.create(5)]);
        await store.ledger.setKeyStatus(disabled.record.id, 'disabled');
        // Debits asked for in one turn of the event loop go in one batch.
        const batchOf = (debits: Array<[string, string, string | undefined]>) =>
          Promise.all(debits.map(([key, endpoint, ref]) => store.ledger.debit(hashApiKey(key), endpoint, { idempotencyRef: ref })));
        const oneKey = await batchOf([
          [alone.key, '/query', 'ref-1'],
          [alone.key, '/document', undefined],
          [alone.key, '/query', 'ref-3'],
        ]);
        const severalKeys = await batchOf([
          [other.key, '/query', undefined],
          [shared.key, '/query', 'ref-1'],
          [disabled.key, '/query', undefined],
          [shared.key, '/document', undefined],
          [shared.key, '/query', 'ref-3'],
        ]);
        const withoutIds = (results: DebitResult[]) => results.map((result) => ({ ...result, chargeId: undefined }));
        assert.deepEqual(withoutIds(oneKey), withoutIds([severalKeys[1], severalKeys[3], severalKeys[4]]));
        assert.deepEqual(withoutIds(oneKey), [
          { outcome: 'charged', balance: 1, chargeId: undefined },
          { outcome: 'charged', balance: 0, chargeId: undefined },
          { outcome: 'no-credits', chargeId: undefined },
        ]);
        assert.deepEqual(severalKeys[2], { outcome: 'inactive', status: 'disabled' });
        assert.deepEqual(await batchOf([[disabled.key, '/query', undefined]]), [{ outcome: 'inactive', status: 'disabled' }]);
        assert.deepEqual(await batchOf([['f'.repeat(64), '/query', undefined]]), [{ outcome: 'unknown-key' }]);
        const charges = async (keyId: string) =>
          (await client.query('SELECT id, endpoint, idempotency_ref FROM charges WHERE key_id = $1 ORDER BY id', [keyId])).rows.map(
            (row: { id: string; endpoint: string; idempotency_ref: string | null }) => ({ ...row, id: Number(row.id) }),
          );
        const [aloneCharges, sharedCharges] = [await charges(alone.record.id), await charges(shared.record.id)];
        assert.deepEqual(
          aloneCharges.map(({ endpoint, idempotency_ref }) => [endpoint, idempotency_ref]),
          [
            ['/query', 'ref-1'],
            ['/document', null],
          ],
        );
        assert.deepEqual(
          sharedCharges.map(({ endpoint, idempotency_ref }) => [endpoint, idempotency_ref]),
          aloneCharges.map(({ endpoint, idempotency_ref }) => [endpoint, idempotency_ref]),
        );
        // Each charged request is told the id of its own charge.
        assert.deepEqual(
          oneKey.flatMap((result) => (result.outcome === 'charged' ? [result.chargeId] : [])),
          aloneCharges.map(({ id }) => id),
        );
        assert.equal((await store.ledger.findKeyById(alone.record.id))!.balance, 0);
        assert.equal((await store.ledger.findKeyById(other.record.id))!.balance, 4);
        assert.equal((await store.ledger.findKeyById(disabled.record.id))!.balance, 5);
      }));

    it('refuses to delete a key, so every charge keeps its key', () =>
      withStoreAndClient(async (store, client) => {
        const key = await new KeyAdmin(store.ledger).create(3);
        const debit = await store.ledger.debit(hashApiKey(key.key), '/document');
        assert.equal(debit.outcome, 'charged');
        await assert.rejects(client.query('DELETE FROM keys WHERE id = $1', [key.record.id]), /keys are never deleted/);
        const { rows } = await client.query('SELECT count(*)::int AS n FROM charges JOIN keys ON keys.id = charges.key_id');
        assert.equal(rows[0].n, 1);
      }));

    it('debits and records outcomes through indexes, however small the tables', () =>
      withStoreAndClient(async (store, client) => {
        const key = await new KeyAdmin(store.ledger).create(100);
        const hash = hashApiKey(key.key);
        // auto_explain sends the plan of every statement the functions run to this client.
        const plans: string[] = [];
        client.on('notice', (notice) => plans.push(notice.message ?? ''));
        await client.query(`LOAD 'auto_explain'`);
        await client.query('SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice');
        // More calls of each than PostgreSQL's five custom plans, so a cached generic plan is seen too.
        const chargeIds: number[] = [];
        for (let call = 0; call < 16; call++) {
          if (call % 2 === 0) {
            const { rows } = await client.query<{ balance: number; charge_id: number }>(
              'SELECT balance, charge_id FROM debit_batch($1, $2, $3, $4, $5)',
              [[hash], ['/query'], [1], [null], null],
            );
            assert.equal(Number(rows[0].balance), 99 - call);
            chargeIds.push(Number(rows[0].charge_id));
          } else {
            const { rows } = await client.query<{ balance: number; granted: number; charge_ids: number[] }>(
              'SELECT balance, granted, charge_ids FROM debit_one_key($1, $2, $3, $4, $5, $6, $7)',
              [hash, ['/query'], [1], [1], [null], null, 1],
            );
            assert.deepEqual([Number(rows[0].balance), rows[0].granted], [99 - call, 1]);
            chargeIds.push(Number(rows[0].charge_ids[0]));
          }
        }
        await client.query('SELECT record_outcomes($1, $2)', [chargeIds, chargeIds.map(() => 200)]);
        const keyPlans = plans.filter((plan) => /\bkeys\b/.test(plan) && /debited/.test(plan));
        const outcomePlans = plans.filter((plan) => /Insert on charge_outcomes/.test(plan));
        assert.equal(keyPlans.length, 16);
        assert.equal(outcomePlans.length, 1);
        for (const plan of [...keyPlans, ...outcomePlans]) assert.doesNotMatch(plan, /Seq Scan on (keys|accounts|charges)/, plan);
        assert.match(keyPlans[0], /Index Scan using keys_key_hash_key on keys/);
        assert.match(keyPlans[1], /Index Scan using keys_key_hash_key on keys/);
        assert.deepEqual(
          (await store.ledger.listCharges(key.record.id)).map((charge) => charge.outcomeStatus),
          chargeIds.map(() => 200),
        );
      }));

    it("keeps a charge's first outcome across flushes, and outcomes recorded before migration 6", () =>
      withStoreAndClient(async (store, client) => {
        const key = await new KeyAdmin(store.ledger).create(10);
        const hash = hashApiKey(key.key);
        const chargeIds: number[] = [];
        for (let request = 0; request < 4; request++) {
          const debit = await store.ledger.debit(hash, '/document');
          assert.equal(debit.outcome, 'charged');
          if (debit.outcome === 'charged') chargeIds.push(debit.chargeId);
        }
        const [first, second, third, fourth] = chargeIds as [number, number, number, number];
        // As a flush whose commit was not acknowledged and was sent again, then a later one.
        await client.query('SELECT record_outcomes($1, $2)', [
          [first, second],
          [200, 404],
        ]);
        await client.query('SELECT record_outcomes($1, $2)', [
          [second, third],
          [500, 402],
        ]);
        await client.query('SELECT record_outcomes($1, $2)', [[], []]);
        // As the previous release recorded outcomes: in the charge's row.
        await client.query('UPDATE charges SET outcome_status = 422 WHERE id = $1', [fourth]);
        const listed = await store.ledger.listCharges(key.record.id);
        assert.deepEqual(
          listed.map((charge) => [charge.id, charge.outcomeStatus]),
          [
            [fourth, 422],
            [third, 402],
            [second, 404],
            [first, 200],
          ],
        );
        assert.equal(Number((await client.query('SELECT count(*) AS n FROM charge_outcomes')).rows[0].n), 2, 'an empty flush writes no row');
      }));

    it('applies migrations once, even when several instances start together', async () => {
      const database = await createTestDatabase();
      try {
        const applied = await Promise.all(Array.from({ length: 4 }, () => PostgresStore.migrate({ url: database.url, ...PG_TEST_OPTIONS })));
        assert.deepEqual(
          applied.flat().sort((a, b) => a - b),
          POSTGRES_MIGRATIONS.map((_, index) => index + 1),
          'each migration applied once, by one of the instances',
        );
        assert.deepEqual(await PostgresStore.migrate({ url: database.url, ...PG_TEST_OPTIONS }), []);
      } finally {
        await database.drop();
      }
    });
  });
}
