import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { AccountAdmin } from '../../src/billing/account-admin.js';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { hashApiKey } from '../../src/billing/keys.js';
import type { DebitResult, KeyRecord } from '../../src/billing/ledger.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/helper.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES } from '../support/pg.js';

/**
 * Keys sharing accounts against a plain model of balances: bursts of concurrent debits over the keys
 * of three accounts (one plain, one with an account cap, one whose key has its own cap), account and
 * key top-ups, revocations, and capped keys debited through the uncapped path. In a burst, a plain account's debits take the longest run in arrival
 * order that its balance covers, whichever of its keys made them; capped debits are decided one by
 * one, key after key. A burst over the plain account's keys alone may fail whole, a
 * database fault injected into the write of its charges. Every outcome, balance and the audit must
 * be what the model says, on both stores.
 */
type Op =
  | { kind: 'burst'; debits: Array<{ key: number; cost: number }>; fault: boolean }
  | { kind: 'account-topup'; account: number; credits: number }
  | { kind: 'key-topup'; key: number; credits: number }
  | { kind: 'revoke'; key: number }
  /** A capped key debited through the uncapped path, as an instance whose copy of it predates its caps would. */
  | { kind: 'unknowing'; key: number; cost: number };

/** Keys 0-2 belong to account 0 (no caps), 3-4 to account 1 (5 credits a day), 5 to account 2 (the key: 3 a day). */
const KEY_ACCOUNTS = [0, 0, 0, 1, 1, 2];
const ACCOUNT_CAP = 5;
const KEY_CAP = 3;

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('burst' as const),
    debits: fc.array(fc.record({ key: fc.integer({ min: 0, max: 5 }), cost: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 12 }),
    fault: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('account-topup' as const), account: fc.integer({ min: 0, max: 2 }), credits: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('key-topup' as const), key: fc.integer({ min: 0, max: 5 }), credits: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('revoke' as const), key: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant('unknowing' as const), key: fc.integer({ min: 3, max: 5 }), cost: fc.integer({ min: 1, max: 3 }) }),
);

interface Faults {
  arm(): Promise<void>;
  disarm(): Promise<void>;
}

async function runModel(store: Store, faults: Faults): Promise<void> {
  const now = Date.parse('2039-02-03T10:00:00.000Z');
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
      const accounts = new AccountAdmin(store.ledger);
      const keys = new KeyAdmin(store.ledger);
      const ids = await Promise.all(
        [{}, { spendCaps: [{ credits: ACCOUNT_CAP, interval: 'day' as const }] }, {}].map(async (caps) => {
          const created = await accounts.create({ name: 'model', credits: 6, ...caps });
          assert.equal(created.outcome, 'created');
          return created.outcome === 'created' ? created.account.id : '';
        }),
      );
      const made = await Promise.all(
        KEY_ACCOUNTS.map(async (account, index) => {
          const life = index === 5 ? { spendCaps: [{ credits: KEY_CAP, interval: 'day' as const }] } : {};
          const created = await keys.createInAccount(ids[account] as string, 0, `k${index}`, null, life);
          assert.equal(created.outcome, 'created');
          return created as { key: string; record: KeyRecord };
        }),
      );
      const balance = [6, 6, 6];
      const revoked = new Set<number>();
      let accountSpent = 0;
      let keySpent = 0;
      for (const step of ops) {
        if (step.kind === 'account-topup') {
          await accounts.topUp(ids[step.account] as string, step.credits);
          balance[step.account] = (balance[step.account] as number) + step.credits;
        } else if (step.kind === 'key-topup') {
          const result = await keys.topUp(made[step.key]?.record.id as string, step.credits);
          assert.equal(result.outcome, revoked.has(step.key) ? 'revoked' : 'topped-up');
          if (!revoked.has(step.key))
            balance[KEY_ACCOUNTS[step.key] as number] = (balance[KEY_ACCOUNTS[step.key] as number] as number) + step.credits;
        } else if (step.kind === 'revoke') {
          await keys.setStatus(made[step.key]?.record.id as string, 'revoked');
          revoked.add(step.key);
        } else if (step.kind === 'unknowing') {
          // Charged at this instant, not in the model's period: it spends the balance, and counts
          // toward the caps' periods of its own time, which the capped debits below never reach.
          const account = KEY_ACCOUNTS[step.key] as number;
          const result = await store.ledger.debit(hashApiKey(made[step.key]?.key as string), '/query', { cost: step.cost });
          const covered = (balance[account] as number) >= step.cost;
          assert.equal(result.outcome, covered ? 'charged' : 'no-credits');
          if (covered) balance[account] = (balance[account] as number) - step.cost;
        } else {
          const faulted = step.fault && step.debits.every((debit) => KEY_ACCOUNTS[debit.key] === 0);
          if (faulted) await faults.arm();
          let results: DebitResult[] | undefined;
          try {
            results = await Promise.all(
              step.debits.map(({ key, cost }) => {
                const record = made[key]?.record as KeyRecord;
                return KEY_ACCOUNTS[key] === 0
                  ? store.ledger.debit(hashApiKey(made[key]?.key as string), '/query', { cost })
                  : store.ledger.debitCapped(record.id, '/query', { cost }, now);
              }),
            );
          } catch {
            results = undefined;
          } finally {
            if (faulted) await faults.disarm();
          }
          if (results === undefined) {
            assert.ok(faulted, 'only an injected fault fails a burst');
            continue;
          }
          const expected = new Array<DebitResult['outcome']>(step.debits.length);
          // Uncapped debits: per account, in arrival order, the longest run its balance covers, whole.
          let blocked = false;
          step.debits.forEach(({ key, cost }, index) => {
            if (KEY_ACCOUNTS[key] !== 0) return;
            if (revoked.has(key)) expected[index] = 'inactive';
            else if (blocked || (balance[0] as number) < cost) {
              blocked = true;
              expected[index] = 'no-credits';
            } else {
              balance[0] = (balance[0] as number) - cost;
              expected[index] = 'charged';
            }
          });
          // Capped debits: key by key, in the order keys first appear, each debit decided on its own.
          const cappedKeys = [...new Set(step.debits.map((debit) => debit.key).filter((key) => KEY_ACCOUNTS[key] !== 0))];
          for (const key of cappedKeys) {
            const account = KEY_ACCOUNTS[key] as number;
            step.debits.forEach((debit, index) => {
              if (debit.key !== key) return;
              const spent = account === 1 ? accountSpent : keySpent;
              if (spent + debit.cost > (account === 1 ? ACCOUNT_CAP : KEY_CAP)) expected[index] = 'capped';
              else if ((balance[account] as number) < debit.cost) expected[index] = 'no-credits';
              else {
                balance[account] = (balance[account] as number) - debit.cost;
                if (account === 1) accountSpent += debit.cost;
                else keySpent += debit.cost;
                expected[index] = 'charged';
              }
            });
          }
          assert.deepEqual(
            results.map((result) => result.outcome),
            expected,
            JSON.stringify(step.debits),
          );
        }
      }
      for (const [index, id] of ids.entries()) {
        assert.equal((await store.ledger.findAccount(id))?.balance, balance[index], `account ${index}`);
        const audit = (await store.ledger.auditLedger()).find((ledger) => ledger.accountId === id);
        assert.equal(audit?.consistent, true);
      }
      for (const [index, key] of made.entries())
        assert.equal((await store.ledger.findKeyById(key.record.id))?.balance, balance[KEY_ACCOUNTS[index] as number]);
    }),
    { numRuns: Number(process.env.MODEL_RUNS ?? 15) },
  );
}

describe('keys sharing accounts against a model, with faults: sqlite', () => {
  it('charges, caps and refuses as the model says', async () => {
    const dir = tempDir();
    const store = new SqliteStore(dir.path);
    const db = new Database(join(dir.path, 'ledger.sqlite'));
    try {
      await runModel(store, {
        arm: async () => {
          db.exec(`CREATE TRIGGER injected_fault BEFORE INSERT ON charges BEGIN SELECT RAISE(ABORT, 'injected fault'); END;`);
        },
        disarm: async () => {
          db.exec('DROP TRIGGER IF EXISTS injected_fault');
        },
      });
    } finally {
      db.close();
      await store.close();
      dir.remove();
    }
  });
});

describe('keys sharing accounts against a model, with faults: postgres', () => {
  it('charges, caps and refuses as the model says', { skip: SKIP_POSTGRES }, async () => {
    const database = await createTestDatabase();
    const store = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query(`CREATE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`);
    try {
      await runModel(store, {
        arm: async () => {
          await client.query('CREATE TRIGGER injected_fault BEFORE INSERT ON charges FOR EACH ROW EXECUTE FUNCTION injected_fault()');
        },
        disarm: async () => {
          await client.query('DROP TRIGGER IF EXISTS injected_fault ON charges');
        },
      });
    } finally {
      await client.end();
      await store.close();
      await database.drop();
    }
  });
});
