import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { ownAccountId } from '../../src/billing/accounts.js';
import { MAX_BALANCE } from '../../src/billing/ledger.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestApp, json, type TestContext, tempDir } from '../support/helper.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES } from '../support/pg.js';

/**
 * Money exactly once under faults: random sequences of top-ups and refill plans (of a key and of an
 * account), Stripe credits, rolls and charges, over an account shared by two keys and a key with an
 * account of its own. Each admin change fails first at a random step (a database error before the
 * change, after it, after its audit entry, while its answer is kept; or its answer lost on the way),
 * then is retried three times under one Idempotency-Key (Stripe: the same event). Balances, grants
 * and audit entries are checked against a plain model after every step and at the end.
 */

const STRIPE_SECRET = 'whsec_model_test_secret';
const FAULTS = ['none', 'before-change', 'after-change', 'after-audit', 'keeping-answer', 'answer-lost'] as const;
type Fault = (typeof FAULTS)[number];

type DatabaseFault = Exclude<Fault, 'none' | 'answer-lost'>;

/** Each database fault is a trigger that raises, on the table the step writes: a roll changes the key, the rest its account. */
function faultTrigger(fault: DatabaseFault, kind: AdminOperation['kind']): { table: string; when: string } {
  switch (fault) {
    case 'before-change':
      return { table: kind === 'roll' ? 'keys' : 'accounts', when: 'BEFORE UPDATE' };
    case 'after-change':
      return { table: 'webhook_events', when: 'AFTER INSERT' };
    case 'after-audit':
      return { table: 'audit_log', when: 'AFTER INSERT' };
    case 'keeping-answer':
      return { table: 'idempotency', when: 'AFTER UPDATE' };
  }
}

interface FaultInjector {
  arm(op: AdminOperation): Promise<void>;
  disarm(op: AdminOperation): Promise<void>;
  close(): Promise<void>;
}

function sqliteFaults(file: string): FaultInjector {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  return {
    async arm({ fault, kind }) {
      if (fault === 'none' || fault === 'answer-lost') return;
      const { table, when } = faultTrigger(fault, kind);
      db.exec(`CREATE TRIGGER injected_fault ${when} ON ${table} BEGIN SELECT RAISE(ABORT, 'injected fault'); END;`);
    },
    async disarm() {
      db.exec('DROP TRIGGER IF EXISTS injected_fault');
    },
    async close() {
      db.close();
    },
  };
}

async function postgresFaults(url: string): Promise<FaultInjector> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`CREATE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`);
  return {
    async arm({ fault, kind }) {
      if (fault === 'none' || fault === 'answer-lost') return;
      const { table, when } = faultTrigger(fault, kind);
      await client.query(`CREATE TRIGGER injected_fault ${when} ON ${table} FOR EACH ROW EXECUTE FUNCTION injected_fault()`);
    },
    async disarm({ fault, kind }) {
      if (fault === 'none' || fault === 'answer-lost') return;
      await client.query(`DROP TRIGGER IF EXISTS injected_fault ON ${faultTrigger(fault, kind).table}`);
    },
    async close() {
      await client.end();
    },
  };
}

type AdminOperation =
  | { kind: 'topup'; key: number; credits: number; fault: Fault }
  | { kind: 'refill'; key: number; credits: number; fault: Fault }
  | { kind: 'stripe'; key: number; credits: number; fault: Fault }
  | { kind: 'roll'; key: number; fault: Fault }
  | { kind: 'account-topup'; account: number; credits: number; fault: Fault }
  | { kind: 'account-refill'; account: number; credits: number; fault: Fault };
type Operation = AdminOperation | { kind: 'charge'; key: number };

/** Keys 0 and 1 share the first account; key 2 has the second, an account of its own. */
const KEYS = 3;
const keyIndex = fc.integer({ min: 0, max: KEYS - 1 });
const accountIndex = fc.integer({ min: 0, max: 1 });
const fault = fc.constantFrom(...FAULTS);
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('topup' as const), key: keyIndex, credits: fc.integer({ min: 1, max: 50 }), fault }),
  fc.record({ kind: fc.constant('refill' as const), key: keyIndex, credits: fc.constantFrom(10, 20), fault }),
  fc.record({ kind: fc.constant('stripe' as const), key: keyIndex, credits: fc.integer({ min: 1, max: 50 }), fault }),
  fc.record({ kind: fc.constant('roll' as const), key: keyIndex, fault }),
  fc.record({ kind: fc.constant('account-topup' as const), account: accountIndex, credits: fc.integer({ min: 1, max: 50 }), fault }),
  fc.record({ kind: fc.constant('account-refill' as const), account: accountIndex, credits: fc.constantFrom(10, 20), fault }),
  fc.record({ kind: fc.constant('charge' as const), key: keyIndex }),
);

/** The plain model: what each account should hold, and what the audit log and grants should say. */
interface ModelAccount {
  id: string;
  balance: number;
  /** The refill plan's credits (interval day, mode add); null: none. */
  plan: number | null;
  /** A refill was granted in the current period (the clock stands still in this test). */
  refillPaid: boolean;
  /** Audit entries naming the account, by action. */
  audits: Record<string, number>;
  grants: number;
}

interface ModelKey {
  id: string;
  plain: string;
  account: ModelAccount;
  /** Audit entries naming the key, by action. */
  audits: Record<string, number>;
}

/** A refill plan set on an account (through one of its keys or itself): granted once a period. */
function applyRefill(account: ModelAccount, credits: number): boolean {
  if (account.plan === credits) return false;
  account.plan = credits;
  if (!account.refillPaid) {
    account.refillPaid = true;
    account.balance = Math.min(MAX_BALANCE, account.balance + credits);
    account.grants++;
  }
  return true;
}

function audited(audits: Record<string, number>, action: string): void {
  audits[action] = (audits[action] ?? 0) + 1;
}

function modelFaults(name: string, open: () => Promise<{ store: Store; faults: FaultInjector; cleanup: () => Promise<void> }>): void {
  describe(`money exactly once under injected faults: ${name}`, () => {
    let context: TestContext;
    let faults: FaultInjector;
    let cleanup: () => Promise<void>;
    let authorization: string;

    before(async () => {
      const opened = await open();
      faults = opened.faults;
      cleanup = opened.cleanup;
      context = await createTestApp({ store: opened.store, settings: { stripe: { webhookSecret: STRIPE_SECRET, priceCredits: {} } } });
      authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('billing', false)).token}`;
    });
    after(async () => {
      await faults.close();
      await context.close();
      await cleanup();
    });

    const admin = (method: 'POST' | 'PUT' | 'GET', url: string, payload?: object, idempotencyKey?: string) =>
      context.app.inject({
        method,
        url,
        headers: { authorization, ...(idempotencyKey && { 'idempotency-key': idempotencyKey }) },
        ...(payload && { payload }),
      });

    const stripeEvent = (key: ModelKey, credits: number, eventId: string) => {
      const body = JSON.stringify({
        id: eventId,
        type: 'checkout.session.completed',
        data: { object: { payment_status: 'paid', client_reference_id: key.id, metadata: { credits: String(credits) } } },
      });
      const at = Math.floor(Date.now() / 1000);
      const signature = `t=${at},v1=${createHmac('sha256', STRIPE_SECRET).update(`${at}.${body}`).digest('hex')}`;
      return () =>
        context.app.inject({
          method: 'POST',
          url: '/billing/stripe/webhook',
          headers: { 'content-type': 'application/json', 'stripe-signature': signature },
          payload: body,
        });
    };

    /** The request of an admin operation, sent the same way on every attempt. */
    function requestOf(op: AdminOperation, keys: ModelKey[], accounts: ModelAccount[]): () => Promise<LightMyRequestResponse> {
      const idempotencyKey = randomUUID();
      const refillPlan = (credits: number) => ({ credits, interval: 'day', mode: 'add' });
      switch (op.kind) {
        case 'topup':
          return () => admin('POST', `/admin/keys/${keys[op.key]?.id}/topup`, { credits: op.credits, reference: 'invoice' }, idempotencyKey);
        case 'refill':
          return () => admin('PUT', `/admin/keys/${keys[op.key]?.id}/refill`, refillPlan(op.credits), idempotencyKey);
        case 'roll':
          return () => admin('POST', `/admin/keys/${keys[op.key]?.id}/roll`, { grace_seconds: 0 }, idempotencyKey);
        case 'stripe':
          return stripeEvent(keys[op.key] as ModelKey, op.credits, `evt_${idempotencyKey}`);
        case 'account-topup':
          return () =>
            admin('POST', `/admin/accounts/${accounts[op.account]?.id}/topup`, { credits: op.credits, reference: 'invoice' }, idempotencyKey);
        case 'account-refill':
          return () => admin('PUT', `/admin/accounts/${accounts[op.account]?.id}/refill`, refillPlan(op.credits), idempotencyKey);
      }
    }

    /** What the model says an admin operation does, applied once; the account it changed. */
    function applyToModel(op: AdminOperation, keys: ModelKey[], accounts: ModelAccount[], answer: Record<string, any>): ModelAccount {
      if (op.kind === 'account-topup' || op.kind === 'account-refill') {
        const account = accounts[op.account] as ModelAccount;
        if (op.kind === 'account-refill') {
          if (applyRefill(account, op.credits)) audited(account.audits, 'accounts.refill');
          return account;
        }
        account.balance += op.credits;
        account.grants++;
        audited(account.audits, 'accounts.topup');
        return account;
      }
      const key = keys[op.key] as ModelKey;
      switch (op.kind) {
        case 'topup':
        case 'stripe':
          key.account.balance += op.credits;
          key.account.grants++;
          audited(key.audits, 'keys.topup');
          break;
        case 'refill':
          if (applyRefill(key.account, op.credits)) audited(key.audits, 'keys.refill');
          break;
        case 'roll':
          key.plain = answer.key;
          audited(key.audits, 'keys.roll');
      }
      return key.account;
    }

    async function runAdmin(op: AdminOperation, keys: ModelKey[], accounts: ModelAccount[]): Promise<void> {
      const send = requestOf(op, keys, accounts);
      await faults.arm(op);
      let first: LightMyRequestResponse;
      try {
        first = await send();
      } finally {
        await faults.disarm(op);
      }
      assert.ok(first.statusCode === 200 || first.statusCode >= 500, `${op.kind} under ${op.fault}: ${first.statusCode} ${first.body}`);
      const answers: Array<Record<string, any>> = [];
      for (let retry = 0; retry < 3; retry++) {
        const response = await send();
        assert.equal(response.statusCode, 200, `${op.kind} retry ${retry} after ${op.fault}: ${response.body}`);
        answers.push(json(response));
      }
      if (op.kind !== 'stripe') {
        assert.deepEqual(answers[1], answers[0], 'every retry is answered alike');
        assert.deepEqual(answers[2], answers[0], 'every retry is answered alike');
      }
      const account = applyToModel(op, keys, accounts, answers[0] as Record<string, any>);
      if (op.kind !== 'roll' && op.kind !== 'stripe') assert.equal(answers[0]?.balance, account.balance, `${op.kind} answers the balance`);
    }

    async function charge(key: ModelKey): Promise<void> {
      const response = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key.plain },
        payload: { query: 'data' },
      });
      assert.equal(response.statusCode, key.account.balance > 0 ? 200 : 402, response.body);
      if (key.account.balance > 0) key.account.balance--;
    }

    /** A shared account with two keys, and a key with an account of its own; each account opened with 2 credits. */
    async function openAccounts(): Promise<{ keys: ModelKey[]; accounts: ModelAccount[] }> {
      const opened = json(await admin('POST', '/admin/accounts', { name: 'Shared', credits: 2 }));
      const shared: ModelAccount = { id: opened.id, balance: 2, plan: null, refillPaid: false, audits: { 'accounts.create': 1 }, grants: 1 };
      const keys: ModelKey[] = [];
      for (let index = 0; index < 2; index++) {
        const created = json(await admin('POST', `/admin/accounts/${shared.id}/keys`, {}));
        keys.push({ id: created.id, plain: created.key, account: shared, audits: { 'keys.create': 1 } });
      }
      const created = json(await admin('POST', '/admin/keys', { credits: 2 }));
      const own: ModelAccount = { id: ownAccountId(created.id), balance: 2, plan: null, refillPaid: false, audits: {}, grants: 1 };
      keys.push({ id: created.id, plain: created.key, account: own, audits: { 'keys.create': 1 } });
      return { keys, accounts: [shared, own] };
    }

    it('grants, audits and answers each change once, whatever fails and however often it is retried', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 8 }), async (operations) => {
          const { keys, accounts } = await openAccounts();
          for (const op of operations) {
            if (op.kind === 'charge') await charge(keys[op.key] as ModelKey);
            else await runAdmin(op, keys, accounts);
            for (const account of accounts) {
              assert.equal(json(await admin('GET', `/admin/accounts/${account.id}`)).balance, account.balance, `balance after ${op.kind}`);
            }
            for (const key of keys)
              assert.equal(json(await admin('GET', `/admin/keys/${key.id}`)).balance, key.account.balance, 'a key shows its account');
          }
          const log = await context.store.admin.listAudit(10_000, null);
          const auditsOf = (target: string) => {
            const counted: Record<string, number> = {};
            for (const entry of log.items.filter((entry) => entry.target === target)) counted[entry.action] = (counted[entry.action] ?? 0) + 1;
            return counted;
          };
          for (const key of keys) assert.deepEqual(auditsOf(key.id), key.audits, `audit entries of ${key.id}`);
          for (const account of accounts) {
            assert.deepEqual(auditsOf(account.id), account.audits, `audit entries of ${account.id}`);
            assert.equal((await context.store.ledger.listGrants(account.id)).length, account.grants, `grants of ${account.id}`);
          }
          const ledgers = (await context.store.ledger.auditLedger()).filter((ledger) => accounts.some((account) => account.id === ledger.accountId));
          assert.deepEqual(
            ledgers.map((ledger) => [ledger.accountId, ledger.balance, ledger.consistent]),
            accounts.map((account) => [account.id, account.balance, true]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
          );
        }),
        { numRuns: Number(process.env.MODEL_RUNS ?? 12) },
      );
    });
  });
}

modelFaults('sqlite', async () => {
  const dir = tempDir();
  const store = new SqliteStore(dir.path);
  return { store, faults: sqliteFaults(join(dir.path, 'ledger.sqlite')), cleanup: async () => dir.remove() };
});

if (!SKIP_POSTGRES) {
  modelFaults('postgres', async () => {
    const database = await createTestDatabase();
    const store = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
    return { store, faults: await postgresFaults(database.url), cleanup: () => database.drop() };
  });
} else {
  describe('money exactly once under injected faults: postgres', () => {
    it('needs TEST_DATABASE_URL', { skip: SKIP_POSTGRES }, () => undefined);
  });
}
