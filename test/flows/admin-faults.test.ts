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
 * Money exactly once under faults: random sequences of top-ups, refill plans, Stripe credits, rolls
 * and charges, each admin change failing first at a random step (a database error before the
 * change, after it, after its audit entry, while its answer is kept; or its answer lost on the way),
 * then retried three times under one Idempotency-Key (Stripe: the same event). Balances, grants and
 * audit entries are checked against a plain model after every step and at the end.
 */

const STRIPE_SECRET = 'whsec_model_test_secret';
const FAULTS = ['none', 'before-change', 'after-change', 'after-audit', 'keeping-answer', 'answer-lost'] as const;
type Fault = (typeof FAULTS)[number];

/** Each database fault is a trigger that raises, on the table the step writes. */
const FAULT_TRIGGERS: Record<Exclude<Fault, 'none' | 'answer-lost'>, { table: string; when: string }> = {
  'before-change': { table: 'keys', when: 'BEFORE UPDATE' },
  'after-change': { table: 'webhook_events', when: 'AFTER INSERT' },
  'after-audit': { table: 'audit_log', when: 'AFTER INSERT' },
  'keeping-answer': { table: 'idempotency', when: 'AFTER UPDATE' },
};

interface FaultInjector {
  arm(fault: Fault): Promise<void>;
  disarm(fault: Fault): Promise<void>;
  close(): Promise<void>;
}

function sqliteFaults(file: string): FaultInjector {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  return {
    async arm(fault) {
      if (fault === 'none' || fault === 'answer-lost') return;
      const { table, when } = FAULT_TRIGGERS[fault];
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
    async arm(fault) {
      if (fault === 'none' || fault === 'answer-lost') return;
      const { table, when } = FAULT_TRIGGERS[fault];
      await client.query(`CREATE TRIGGER injected_fault ${when} ON ${table} FOR EACH ROW EXECUTE FUNCTION injected_fault()`);
    },
    async disarm(fault) {
      if (fault === 'none' || fault === 'answer-lost') return;
      await client.query(`DROP TRIGGER IF EXISTS injected_fault ON ${FAULT_TRIGGERS[fault].table}`);
    },
    async close() {
      await client.end();
    },
  };
}

type Operation =
  | { kind: 'topup'; key: number; credits: number; fault: Fault }
  | { kind: 'refill'; key: number; credits: number; fault: Fault }
  | { kind: 'stripe'; key: number; credits: number; fault: Fault }
  | { kind: 'roll'; key: number; fault: Fault }
  | { kind: 'charge'; key: number };

const KEYS = 3;
const keyIndex = fc.integer({ min: 0, max: KEYS - 1 });
const fault = fc.constantFrom(...FAULTS);
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('topup' as const), key: keyIndex, credits: fc.integer({ min: 1, max: 50 }), fault }),
  fc.record({ kind: fc.constant('refill' as const), key: keyIndex, credits: fc.constantFrom(10, 20), fault }),
  fc.record({ kind: fc.constant('stripe' as const), key: keyIndex, credits: fc.integer({ min: 1, max: 50 }), fault }),
  fc.record({ kind: fc.constant('roll' as const), key: keyIndex, fault }),
  fc.record({ kind: fc.constant('charge' as const), key: keyIndex }),
);

/** The plain model: what each key should hold, and what the audit log and grants should say. */
interface ModelKey {
  id: string;
  plain: string;
  balance: number;
  /** The refill plan's credits (interval day, mode add); null: none. */
  plan: number | null;
  /** A refill was granted in the current period (the clock stands still in this test). */
  refillPaid: boolean;
  audits: Record<string, number>;
  grants: number;
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
    function requestOf(op: Exclude<Operation, { kind: 'charge' }>, key: ModelKey): () => Promise<LightMyRequestResponse> {
      const idempotencyKey = randomUUID();
      switch (op.kind) {
        case 'topup':
          return () => admin('POST', `/admin/keys/${key.id}/topup`, { credits: op.credits, reference: 'invoice' }, idempotencyKey);
        case 'refill':
          return () => admin('PUT', `/admin/keys/${key.id}/refill`, { credits: op.credits, interval: 'day', mode: 'add' }, idempotencyKey);
        case 'roll':
          return () => admin('POST', `/admin/keys/${key.id}/roll`, { grace_seconds: 0 }, idempotencyKey);
        case 'stripe':
          return stripeEvent(key, op.credits, `evt_${idempotencyKey}`);
      }
    }

    /** What the model says an admin operation does, applied once. */
    function applyToModel(op: Exclude<Operation, { kind: 'charge' }>, key: ModelKey, answer: Record<string, any>): void {
      const audit = (action: string) => {
        key.audits[action] = (key.audits[action] ?? 0) + 1;
      };
      switch (op.kind) {
        case 'topup':
        case 'stripe':
          key.balance += op.credits;
          key.grants++;
          audit('keys.topup');
          return;
        case 'refill': {
          if (key.plan === op.credits) return;
          key.plan = op.credits;
          audit('keys.refill');
          if (key.refillPaid) return;
          key.refillPaid = true;
          key.balance = Math.min(MAX_BALANCE, key.balance + op.credits);
          key.grants++;
          return;
        }
        case 'roll':
          key.plain = answer.key;
          audit('keys.roll');
      }
    }

    async function runAdmin(op: Exclude<Operation, { kind: 'charge' }>, key: ModelKey): Promise<void> {
      const send = requestOf(op, key);
      await faults.arm(op.fault);
      let first: LightMyRequestResponse;
      try {
        first = await send();
      } finally {
        await faults.disarm(op.fault);
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
      applyToModel(op, key, answers[0] as Record<string, any>);
      if (op.kind === 'topup' || op.kind === 'refill') assert.equal(answers[0]?.balance, key.balance, `${op.kind} answers the balance`);
    }

    async function charge(key: ModelKey): Promise<void> {
      const response = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key.plain },
        payload: { query: 'data' },
      });
      assert.equal(response.statusCode, key.balance > 0 ? 200 : 402, response.body);
      if (key.balance > 0) key.balance--;
    }

    it('grants, audits and answers each change once, whatever fails and however often it is retried', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 8 }), async (operations) => {
          const keys: ModelKey[] = [];
          for (let index = 0; index < KEYS; index++) {
            const created = json(await admin('POST', '/admin/keys', { credits: 2 }));
            keys.push({ id: created.id, plain: created.key, balance: 2, plan: null, refillPaid: false, audits: { 'keys.create': 1 }, grants: 1 });
          }
          for (const op of operations) {
            const key = keys[op.key] as ModelKey;
            if (op.kind === 'charge') await charge(key);
            else await runAdmin(op, key);
            assert.equal(json(await admin('GET', `/admin/keys/${key.id}`)).balance, key.balance, `balance after ${op.kind}`);
          }
          const log = await context.store.admin.listAudit(10_000, null);
          for (const key of keys) {
            const entries = log.items.filter((entry) => entry.target === key.id);
            const counted: Record<string, number> = {};
            for (const entry of entries) counted[entry.action] = (counted[entry.action] ?? 0) + 1;
            assert.deepEqual(counted, key.audits, `audit entries of ${key.id}`);
            assert.equal((await context.store.ledger.listGrants(ownAccountId(key.id))).length, key.grants, `grants of ${key.id}`);
          }
          const ledgers = (await context.store.ledger.auditLedger()).filter((ledger) =>
            keys.some((key) => ownAccountId(key.id) === ledger.accountId),
          );
          assert.deepEqual(
            ledgers.map((ledger) => [ledger.accountId, ledger.balance, ledger.consistent]),
            keys.map((key) => [ownAccountId(key.id), key.balance, true]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
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
