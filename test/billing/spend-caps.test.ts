import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { type CapInterval, capPeriod, type SpendCap } from '../../src/billing/spend-caps.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/helper.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES } from '../support/pg.js';

describe('spend cap periods', () => {
  it('are UTC calendar days, ISO weeks from Monday, and calendar months', () => {
    const sunday = Date.parse('2037-01-04T23:59:59.999Z');
    assert.deepEqual(capPeriod('day', sunday), { start: '2037-01-04T00:00:00.000Z', end: '2037-01-05T00:00:00.000Z' });
    assert.deepEqual(capPeriod('week', sunday), { start: '2036-12-29T00:00:00.000Z', end: '2037-01-05T00:00:00.000Z' });
    assert.deepEqual(capPeriod('week', Date.parse('2037-01-05T00:00:00.000Z')).start, '2037-01-05T00:00:00.000Z');
    assert.deepEqual(capPeriod('month', Date.parse('2036-02-29T12:00:00.000Z')), {
      start: '2036-02-01T00:00:00.000Z',
      end: '2036-03-01T00:00:00.000Z',
    });
  });
});

/**
 * Capped debits against a plain model: random bursts of debits of random prices at random days,
 * some of them failing whole (a database fault injected into the write of the period's spend).
 * Balance, charges and each period's spend must be what the model says, on both stores.
 */
type Burst = { day: number; costs: number[]; fault: boolean };

const burst: fc.Arbitrary<Burst> = fc.record({
  day: fc.integer({ min: 0, max: 40 }),
  costs: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 6 }),
  fault: fc.boolean(),
});

interface Faults {
  arm(): Promise<void>;
  disarm(): Promise<void>;
  close(): Promise<void>;
}

function capsModel(store: () => Store, faults: () => Faults): () => Promise<void> {
  return async () => {
    const caps: SpendCap[] = [
      { credits: 5, interval: 'day' },
      { credits: 12, interval: 'week' },
      { credits: 30, interval: 'month' },
    ];
    const start = Date.parse('2038-01-01T09:00:00.000Z');
    await fc.assert(
      fc.asyncProperty(fc.array(burst, { minLength: 1, maxLength: 10 }), async (bursts) => {
        const { record } = await new KeyAdmin(store().ledger).create(40, 'model', null, { spendCaps: caps });
        let balance = 40;
        let charges = 0;
        const spent = new Map<string, number>();
        const periodKey = (interval: CapInterval, at: number) => `${interval} ${capPeriod(interval, at).start}`;
        for (const { day, costs, fault } of [...bursts].sort((a, b) => a.day - b.day)) {
          const at = start + day * 86_400_000;
          if (fault) await faults().arm();
          let results: Awaited<ReturnType<Store['ledger']['debitCapped']>>[] | undefined;
          try {
            results = await Promise.all(costs.map((cost) => store().ledger.debitCapped(record.id, '/query', { cost }, at)));
          } catch {
            results = undefined;
          } finally {
            if (fault) await faults().disarm();
          }
          // A fault fails the whole batch when it writes a period's spend (a batch of refusals only writes none).
          if (results === undefined) {
            assert.ok(fault, 'only an injected fault fails a batch');
            continue;
          }
          costs.forEach((cost, index) => {
            const over = caps.some((cap) => (spent.get(periodKey(cap.interval, at)) ?? 0) + cost > cap.credits);
            const expected = over ? 'capped' : balance < cost ? 'no-credits' : 'charged';
            assert.equal(results?.[index]?.outcome, expected, `day ${day}, cost ${cost}`);
            if (expected !== 'charged') return;
            balance -= cost;
            charges++;
            for (const cap of caps) spent.set(periodKey(cap.interval, at), (spent.get(periodKey(cap.interval, at)) ?? 0) + cost);
          });
        }
        assert.equal((await store().ledger.findKeyById(record.id))!.balance, balance);
        assert.equal(await store().ledger.countCharges(record.id), charges);
        assert.equal((await store().ledger.auditLedger()).find((ledger) => ledger.accountId === record.accountId)?.consistent, true);
      }),
      { numRuns: Number(process.env.MODEL_RUNS ?? 15) },
    );
  };
}

describe('capped debits against a model, with faults: sqlite', () => {
  it('charges, caps and refuses as the model says', async () => {
    const dir = tempDir();
    const store = new SqliteStore(dir.path);
    const db = new Database(join(dir.path, 'ledger.sqlite'));
    const faults: Faults = {
      arm: async () => {
        db.exec(`CREATE TRIGGER injected_fault BEFORE INSERT ON key_spend BEGIN SELECT RAISE(ABORT, 'injected fault'); END;`);
      },
      disarm: async () => {
        db.exec('DROP TRIGGER IF EXISTS injected_fault');
      },
      close: async () => {
        db.close();
      },
    };
    try {
      await capsModel(
        () => store,
        () => faults,
      )();
    } finally {
      await faults.close();
      await store.close();
      dir.remove();
    }
  });
});

describe('capped debits against a model, with faults: postgres', () => {
  it('charges, caps and refuses as the model says', { skip: SKIP_POSTGRES }, async () => {
    const database = await createTestDatabase();
    const store = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query(`CREATE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`);
    const faults: Faults = {
      arm: async () => {
        await client.query('CREATE TRIGGER injected_fault BEFORE INSERT ON key_spend FOR EACH ROW EXECUTE FUNCTION injected_fault()');
      },
      disarm: async () => {
        await client.query('DROP TRIGGER IF EXISTS injected_fault ON key_spend');
      },
      close: async () => client.end(),
    };
    try {
      await capsModel(
        () => store,
        () => faults,
      )();
    } finally {
      await faults.close();
      await store.close();
      await database.drop();
    }
  });
});
