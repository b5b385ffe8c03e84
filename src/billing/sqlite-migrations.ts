import type { Migration } from '../platform/migrations.js';

/**
 * Billing's part of ledger.sqlite's schema: its migrations, each with its place in the one order the
 * file applies (store/sqlite-schema.ts). Two also create another domain's first table (idempotency
 * entries in 2, the webhook outbox in 7): an applied version's SQL never changes, so they stay whole.
 */
export const BILLING_SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE keys (
     id TEXT PRIMARY KEY,
     key_hash TEXT NOT NULL UNIQUE,
     name TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('active', 'disabled', 'revoked')),
     balance INTEGER NOT NULL CHECK (balance >= 0),
     created_at TEXT NOT NULL,
     -- How many credits the latest debit statement took: MIN(balance, requests in its batch).
     last_debit INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE credit_grants (
     id INTEGER PRIMARY KEY,
     key_id TEXT NOT NULL REFERENCES keys(id),
     amount INTEGER NOT NULL CHECK (amount >= 0),
     reason TEXT NOT NULL,
     at TEXT NOT NULL
   );
   CREATE TABLE charges (
     id INTEGER PRIMARY KEY,
     key_id TEXT NOT NULL REFERENCES keys(id),
     endpoint TEXT NOT NULL,
     at TEXT NOT NULL,
     outcome_status INTEGER
   );
   CREATE INDEX charges_by_key ON charges(key_id, id);
   CREATE TRIGGER charges_append_only BEFORE DELETE ON charges
   BEGIN SELECT RAISE(ABORT, 'charges are append-only'); END;`,
  },
  {
    version: 2,
    sql: `ALTER TABLE keys ADD COLUMN rate_limit REAL;
   ALTER TABLE charges ADD COLUMN idempotency_ref TEXT;
   CREATE INDEX charges_by_idempotency_ref ON charges(idempotency_ref) WHERE idempotency_ref IS NOT NULL;
   CREATE TABLE idempotency (
     key_hash TEXT NOT NULL,
     idempotency_key TEXT NOT NULL,
     ref TEXT NOT NULL,
     fingerprint TEXT NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('running', 'done')),
     locked_until INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     status INTEGER,
     body TEXT,
     content_type TEXT,
     credits_remaining INTEGER,
     PRIMARY KEY (key_hash, idempotency_key)
   ) WITHOUT ROWID;
   CREATE INDEX idempotency_by_expiry ON idempotency(expires_at);`,
  },
  // A rolled key's former hashes, each accepted until its time; and the idempotency ref of a
  // top-up on its grant, so a retry of a top-up whose answer was lost grants nothing more.
  {
    version: 5,
    sql: `CREATE TABLE retired_keys (
     key_hash TEXT PRIMARY KEY,
     key_id TEXT NOT NULL REFERENCES keys(id),
     valid_until TEXT NOT NULL
   );
   CREATE INDEX retired_keys_by_key ON retired_keys(key_id);
   ALTER TABLE credit_grants ADD COLUMN idempotency_ref TEXT;
   CREATE UNIQUE INDEX credit_grants_by_idempotency_ref ON credit_grants(idempotency_ref) WHERE idempotency_ref IS NOT NULL;`,
  },
  // Grants that expire. A debit only lowers keys.balance; which grant it spent is settled later,
  // soonest-expiring first, whenever the key is granted or a grant expires: the credits spent since
  // the last settlement are settled_balance - balance. An expiring grant's remaining is as of then.
  {
    version: 6,
    sql: `ALTER TABLE credit_grants ADD COLUMN expires_at TEXT;
   ALTER TABLE credit_grants ADD COLUMN remaining INTEGER CHECK (remaining >= 0);
   ALTER TABLE keys ADD COLUMN settled_balance INTEGER;
   ALTER TABLE keys ADD COLUMN expiring_grants INTEGER NOT NULL DEFAULT 0;
   CREATE INDEX credit_grants_expiring ON credit_grants(expires_at) WHERE remaining > 0;
   CREATE INDEX credit_grants_by_key ON credit_grants(key_id);
   CREATE TABLE credit_expiries (
     id INTEGER PRIMARY KEY,
     key_id TEXT NOT NULL REFERENCES keys(id),
     grant_id INTEGER NOT NULL REFERENCES credit_grants(id),
     amount INTEGER NOT NULL CHECK (amount > 0),
     at TEXT NOT NULL
   );
   CREATE INDEX credit_expiries_by_key ON credit_expiries(key_id);`,
  },
  // Prices: a charge records the credits it took; a key may carry its own prices. Webhooks: events
  // are written in the transaction of the change that causes them (the outbox), then delivered to
  // every endpoint subscribed, each delivery with its attempts.
  {
    version: 7,
    sql: `ALTER TABLE charges ADD COLUMN credits INTEGER NOT NULL DEFAULT 1 CHECK (credits >= 1);
   ALTER TABLE keys ADD COLUMN prices TEXT;
   ALTER TABLE keys ADD COLUMN low_balance_threshold INTEGER;
   CREATE TABLE webhook_events (
     id TEXT PRIMARY KEY,
     type TEXT NOT NULL,
     key_id TEXT,
     data TEXT NOT NULL,
     created_at TEXT NOT NULL,
     dispatched INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX webhook_events_undispatched ON webhook_events(created_at) WHERE dispatched = 0;
   CREATE TABLE webhook_endpoints (
     id TEXT PRIMARY KEY,
     url TEXT NOT NULL,
     secret TEXT NOT NULL,
     events TEXT,
     created_at TEXT NOT NULL
   );
   CREATE TABLE webhook_deliveries (
     id TEXT PRIMARY KEY,
     event_id TEXT NOT NULL REFERENCES webhook_events(id),
     endpoint_id TEXT NOT NULL,
     state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
     attempts TEXT NOT NULL DEFAULT '[]',
     next_attempt_at TEXT,
     created_at TEXT NOT NULL
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state = 'pending';
   CREATE INDEX webhook_deliveries_newest ON webhook_deliveries(created_at, id);`,
  },
  // Refill plans (billing/refills.ts): period last_period was the last granted; next_refill_at is
  // the start of the one after, so that due plans are found by an index.
  {
    version: 8,
    sql: `CREATE TABLE refill_rules (
     key_id TEXT PRIMARY KEY REFERENCES keys(id),
     credits INTEGER NOT NULL CHECK (credits >= 1),
     interval TEXT NOT NULL CHECK (interval IN ('day', 'week', 'month')),
     mode TEXT NOT NULL CHECK (mode IN ('add', 'replace')),
     anchor TEXT NOT NULL,
     last_period INTEGER NOT NULL,
     next_refill_at TEXT NOT NULL
   );
   CREATE INDEX refill_rules_due ON refill_rules(next_refill_at);`,
  },
  // The end of the last period a key's refills paid for (billing/refills.ts, planAnchor): a plan
  // set again, changed, or ended and set anew starts there, never granting twice in one period.
  {
    version: 9,
    sql: `ALTER TABLE keys ADD COLUMN refill_paid_until TEXT;
   UPDATE keys SET refill_paid_until = (SELECT next_refill_at FROM refill_rules r WHERE r.key_id = keys.id AND r.last_period >= 0);`,
  },
  // A key's own end (expires_at: refused after it, key.expired sent once, when expiry_announced is
  // set), the operator's metadata (a JSON object, carried in its webhook events), and its spend caps
  // (billing/spend-caps.ts) with what each period spent, written with each capped debit.
  {
    version: 10,
    sql: `ALTER TABLE keys ADD COLUMN expires_at TEXT;
   ALTER TABLE keys ADD COLUMN metadata TEXT;
   ALTER TABLE keys ADD COLUMN expiry_announced INTEGER NOT NULL DEFAULT 0;
   CREATE INDEX keys_expiring ON keys(expires_at) WHERE expires_at IS NOT NULL AND expiry_announced = 0;
   ALTER TABLE keys ADD COLUMN spend_caps TEXT;
   CREATE TABLE key_spend (
     key_id TEXT NOT NULL,
     interval TEXT NOT NULL CHECK (interval IN ('day', 'week', 'month')),
     period_start TEXT NOT NULL,
     spent INTEGER NOT NULL,
     cap_reached_sent INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (key_id, interval, period_start)
   ) WITHOUT ROWID;`,
  },
  // Accounts (billing/accounts.ts): the balance and everything about it (grants, expiries, the
  // refill plan, prices, the low-balance mark) move from each key to an account of its own, whose
  // id shares the key's digits. The credit tables are rebuilt keyed by account, with their ids.
  // last_debit: as keys.last_debit was, how many debits the latest debit statement took.
  {
    version: 12,
    sql: `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     external_id TEXT UNIQUE,
     metadata TEXT,
     balance INTEGER NOT NULL CHECK (balance >= 0),
     settled_balance INTEGER,
     expiring_grants INTEGER NOT NULL DEFAULT 0,
     prices TEXT,
     low_balance_threshold INTEGER,
     refill_paid_until TEXT,
     spend_caps TEXT,
     created_at TEXT NOT NULL,
     last_debit INTEGER NOT NULL DEFAULT 0
   );
   INSERT INTO accounts (id, name, balance, settled_balance, expiring_grants, prices, low_balance_threshold, refill_paid_until, created_at)
     SELECT 'acct_' || CASE WHEN substr(id, 1, 4) = 'key_' THEN substr(id, 5) ELSE id END, name, balance, settled_balance,
       expiring_grants, prices, low_balance_threshold, refill_paid_until, created_at FROM keys;
   ALTER TABLE keys ADD COLUMN account_id TEXT REFERENCES accounts(id);
   UPDATE keys SET account_id = 'acct_' || CASE WHEN substr(id, 1, 4) = 'key_' THEN substr(id, 5) ELSE id END;
   CREATE INDEX keys_by_account ON keys(account_id, created_at);
   CREATE TABLE account_grants (
     id INTEGER PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     amount INTEGER NOT NULL CHECK (amount >= 0),
     reason TEXT NOT NULL,
     at TEXT NOT NULL,
     idempotency_ref TEXT,
     expires_at TEXT,
     remaining INTEGER CHECK (remaining >= 0)
   );
   INSERT INTO account_grants SELECT g.id, k.account_id, g.amount, g.reason, g.at, g.idempotency_ref, g.expires_at, g.remaining
     FROM credit_grants g JOIN keys k ON k.id = g.key_id;
   CREATE TABLE account_expiries (
     id INTEGER PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     grant_id INTEGER NOT NULL REFERENCES account_grants(id),
     amount INTEGER NOT NULL CHECK (amount > 0),
     at TEXT NOT NULL
   );
   INSERT INTO account_expiries SELECT e.id, k.account_id, e.grant_id, e.amount, e.at FROM credit_expiries e JOIN keys k ON k.id = e.key_id;
   CREATE TABLE account_refills (
     account_id TEXT PRIMARY KEY REFERENCES accounts(id),
     credits INTEGER NOT NULL CHECK (credits >= 1),
     interval TEXT NOT NULL CHECK (interval IN ('day', 'week', 'month')),
     mode TEXT NOT NULL CHECK (mode IN ('add', 'replace')),
     anchor TEXT NOT NULL,
     last_period INTEGER NOT NULL,
     next_refill_at TEXT NOT NULL
   );
   INSERT INTO account_refills SELECT k.account_id, r.credits, r.interval, r.mode, r.anchor, r.last_period, r.next_refill_at
     FROM refill_rules r JOIN keys k ON k.id = r.key_id;
   DROP TABLE credit_expiries;
   DROP TABLE credit_grants;
   DROP TABLE refill_rules;
   ALTER TABLE account_grants RENAME TO credit_grants;
   ALTER TABLE account_expiries RENAME TO credit_expiries;
   ALTER TABLE account_refills RENAME TO refill_rules;
   CREATE UNIQUE INDEX credit_grants_by_idempotency_ref ON credit_grants(idempotency_ref) WHERE idempotency_ref IS NOT NULL;
   CREATE INDEX credit_grants_expiring ON credit_grants(expires_at) WHERE remaining > 0;
   CREATE INDEX credit_grants_by_account ON credit_grants(account_id);
   CREATE INDEX credit_expiries_by_account ON credit_expiries(account_id);
   CREATE INDEX refill_rules_due ON refill_rules(next_refill_at);
   ALTER TABLE keys DROP COLUMN balance;
   ALTER TABLE keys DROP COLUMN settled_balance;
   ALTER TABLE keys DROP COLUMN expiring_grants;
   ALTER TABLE keys DROP COLUMN prices;
   ALTER TABLE keys DROP COLUMN low_balance_threshold;
   ALTER TABLE keys DROP COLUMN refill_paid_until;
   ALTER TABLE keys DROP COLUMN last_debit;
   ALTER TABLE webhook_events ADD COLUMN account_id TEXT;
   UPDATE webhook_events SET account_id = (SELECT account_id FROM keys WHERE keys.id = webhook_events.key_id);
   UPDATE webhook_events SET data = json_set(data, '$.account_id', account_id) WHERE account_id IS NOT NULL;
   CREATE TABLE account_spend (
     account_id TEXT NOT NULL,
     interval TEXT NOT NULL CHECK (interval IN ('day', 'week', 'month')),
     period_start TEXT NOT NULL,
     spent INTEGER NOT NULL,
     cap_reached_sent INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (account_id, interval, period_start)
   ) WITHOUT ROWID;`,
  },
  // Per holder of spend caps (a key or an account), the last charge its periods' spend counts:
  // a charge made after it (by an instance that did not know of the caps yet) is counted at its
  // next capped debit. Caps set before this count every charge made so far.
  {
    version: 15,
    sql: `CREATE TABLE cap_counted (holder_id TEXT PRIMARY KEY, charge_id INTEGER NOT NULL) WITHOUT ROWID;
   INSERT INTO cap_counted (holder_id, charge_id)
     SELECT id, (SELECT coalesce(max(id), 0) FROM charges) FROM keys WHERE spend_caps IS NOT NULL
     UNION ALL SELECT id, (SELECT coalesce(max(id), 0) FROM charges) FROM accounts WHERE spend_caps IS NOT NULL;`,
  },
];
