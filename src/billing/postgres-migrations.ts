import type { Migration } from '../platform/migrations.js';

/**
 * Billing's part of PostgreSQL's schema: its migrations, each with its place in the one order every
 * store applies (store/postgres-schema.ts). Three also create another domain's first table (documents
 * in 1, idempotency entries in 2, the webhook outbox in 11): an applied version's SQL never changes,
 * so they stay whole.
 */
export const BILLING_POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE keys (
     id text PRIMARY KEY,
     key_hash text NOT NULL UNIQUE,
     name text NOT NULL,
     status text NOT NULL CHECK (status IN ('active', 'disabled', 'revoked')),
     balance bigint NOT NULL CHECK (balance >= 0),
     created_at timestamptz NOT NULL DEFAULT now(),
     -- How many credits the latest debit statement took: LEAST(balance, requests in its batch).
     last_debit integer NOT NULL DEFAULT 0
   );
   CREATE TABLE credit_grants (
     id bigserial PRIMARY KEY,
     key_id text NOT NULL REFERENCES keys(id),
     amount bigint NOT NULL CHECK (amount >= 0),
     reason text NOT NULL,
     at timestamptz NOT NULL DEFAULT now()
   );
   CREATE TABLE charges (
     id bigserial PRIMARY KEY,
     key_id text NOT NULL REFERENCES keys(id),
     endpoint text NOT NULL,
     at timestamptz NOT NULL DEFAULT now(),
     outcome_status integer
   );
   CREATE INDEX charges_by_key ON charges (key_id, id);
   CREATE FUNCTION charges_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'charges are append-only'; END $$;
   CREATE TRIGGER charges_append_only BEFORE DELETE ON charges FOR EACH ROW EXECUTE FUNCTION charges_append_only();
   -- Documents are also the change log the instances' search replicas follow: every write takes the
   -- next seq, and writers hold an advisory lock, so seq order is commit order.
   CREATE SEQUENCE document_seq;
   CREATE TABLE documents (
     doc_id text PRIMARY KEY,
     title text NOT NULL,
     text text NOT NULL,
     metadata json NOT NULL,
     deleted boolean NOT NULL DEFAULT false,
     seq bigint NOT NULL
   );
   CREATE INDEX documents_by_seq ON documents (seq);`,
  },
  {
    version: 2,
    sql: `ALTER TABLE keys ADD COLUMN rate_limit double precision;
   ALTER TABLE charges ADD COLUMN idempotency_ref text;
   CREATE INDEX charges_by_idempotency_ref ON charges (idempotency_ref) WHERE idempotency_ref IS NOT NULL;
   CREATE TABLE idempotency (
     key_hash text NOT NULL,
     idempotency_key text NOT NULL,
     ref text NOT NULL,
     fingerprint text NOT NULL,
     state text NOT NULL CHECK (state IN ('running', 'done')),
     locked_until timestamptz NOT NULL,
     expires_at timestamptz NOT NULL,
     status integer,
     body text,
     content_type text,
     credits_remaining bigint,
     PRIMARY KEY (key_hash, idempotency_key)
   );
   CREATE INDEX idempotency_by_expiry ON idempotency (expires_at);`,
  },
  // The debit statement inserts charges only for the key rows it has just updated, and keys are never
  // deleted (revoking is a status), so the foreign key's check, run for every charge, guarded nothing
  // and took a third of that statement's time. Deleting a key is refused instead, which keeps every
  // charge's key in place as the foreign key did. Each charge row is updated once, with its outcome,
  // shortly after it is written: half of every page is left for that, so the update stays on the
  // page (a HOT update, no index entries): 6% of them did at the default, 93% at 50 (measured).
  {
    version: 4,
    sql: `ALTER TABLE charges DROP CONSTRAINT charges_key_id_fkey;
   CREATE FUNCTION keys_never_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'keys are never deleted: revoke them'; END $$;
   CREATE TRIGGER keys_never_deleted BEFORE DELETE ON keys FOR EACH STATEMENT EXECUTE FUNCTION keys_never_deleted();
   ALTER TABLE charges SET (fillfactor = 50);`,
  },
  // The debit and outcome statements, moved into functions that carry their own planner settings:
  // index lookups only. With few keys the keys table is a page or two, so the planner scanned it;
  // but a key debited thousands of times a second leaves that page full of dead row versions, and
  // every scan checks each one (three scans a batch). The outcomes' update, planned from statistics
  // taken while most outcomes were still unknown, scanned all of charges every 50 ms. Under
  // bench:scale-out's load the two took a fifth of PostgreSQL's CPU per request. Key rows are
  // locked in id order, so concurrent batches (of any instance or version) cannot deadlock. JIT is
  // off for them: a scan the setting could not avoid would be costed at 10^10, past JIT's
  // threshold, and compiled every call.
  {
    version: 5,
    sql: `CREATE FUNCTION debit_batch(hashes text[], endpoints text[], ordinals integer[], refs text[])
     RETURNS TABLE (key_hash text, balance bigint, granted integer, status text, charge_ids bigint[])
     LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
   #variable_conflict use_column
   BEGIN
     RETURN QUERY
     WITH job AS (
       SELECT * FROM unnest(hashes, endpoints, ordinals, refs)
         WITH ORDINALITY AS job(key_hash, endpoint, ordinal, idempotency_ref, position)
     ), wanted AS (
       SELECT job.key_hash, count(*)::integer AS n FROM job GROUP BY job.key_hash
     ), locked AS (
       SELECT keys.id FROM keys JOIN wanted ON wanted.key_hash = keys.key_hash ORDER BY keys.id FOR UPDATE OF keys
     ), debited AS (
       UPDATE keys SET balance = keys.balance - LEAST(keys.balance, wanted.n), last_debit = LEAST(keys.balance, wanted.n)
       FROM wanted, locked
       WHERE keys.id = locked.id AND keys.key_hash = wanted.key_hash AND keys.status = 'active' AND keys.balance > 0
       RETURNING keys.id, keys.key_hash, keys.balance, keys.last_debit
     ), charged AS (
       INSERT INTO charges (key_id, endpoint, idempotency_ref)
       SELECT debited.id, job.endpoint, job.idempotency_ref FROM job JOIN debited ON debited.key_hash = job.key_hash
       WHERE job.ordinal <= debited.last_debit ORDER BY job.position
       RETURNING charges.id, charges.key_id
     )
     SELECT wanted.key_hash, debited.balance, debited.last_debit, keys.status,
       (SELECT array_agg(charged.id ORDER BY charged.id) FROM charged WHERE charged.key_id = debited.id)
     FROM wanted LEFT JOIN debited ON debited.key_hash = wanted.key_hash LEFT JOIN keys ON keys.key_hash = wanted.key_hash;
   END $$;
   -- The first outcome recorded for a charge is its outcome.
   CREATE FUNCTION record_outcomes(ids bigint[], statuses integer[]) RETURNS void
     LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
   BEGIN
     UPDATE charges SET outcome_status = outcome.status FROM unnest(ids, statuses) AS outcome(id, status)
     WHERE charges.id = outcome.id AND charges.outcome_status IS NULL;
   END $$;`,
  },
  // Outcomes as one row per flush instead of an update per charge: the updates were a fifth of
  // PostgreSQL's CPU per billable request (9-10 µs a row) and took the cores the debits wait for
  // (bench:scale-out). A flush's span (lowest to highest charge id) finds the rows
  // that may hold a charge; when one charge is in several (a flush retried after its commit was
  // not acknowledged), the first row holds its outcome. Charges recorded before this migration
  // keep theirs in charges.outcome_status, which nothing updates any more, so its pages no longer
  // keep room for that update. Instances of the previous release call the same function.
  {
    version: 6,
    sql: `CREATE TABLE charge_outcomes (
     id bigserial PRIMARY KEY,
     span int8range NOT NULL,
     charge_ids bigint[] NOT NULL,
     statuses integer[] NOT NULL
   );
   CREATE INDEX charge_outcomes_by_span ON charge_outcomes USING gist (span);
   ALTER TABLE charges RESET (fillfactor);
   CREATE OR REPLACE FUNCTION record_outcomes(ids bigint[], statuses integer[]) RETURNS void
     LANGUAGE plpgsql SET jit = off AS $$
   BEGIN
     INSERT INTO charge_outcomes (span, charge_ids, statuses)
     SELECT int8range(min(id), max(id), '[]'), ids, statuses FROM unnest(ids) AS id HAVING count(*) > 0;
   END $$;
   CREATE FUNCTION charge_outcome(charge bigint) RETURNS integer
     LANGUAGE sql STABLE AS $$
     WITH holding AS MATERIALIZED (
       SELECT id, statuses[array_position(charge_ids, charge)] AS status FROM charge_outcomes WHERE span @> charge
     )
     SELECT status FROM holding WHERE status IS NOT NULL ORDER BY id LIMIT 1
   $$;`,
  },
  // A batch of one key's debits (one busy client; every batch of bench:scale-out's hot key) in a
  // statement without what several keys need: grouping by key, and locking the key rows in id order
  // before the update (one row has no order to keep, and the lock was one more write to it).
  // PostgreSQL's CPU per batch of 25 debits: 349-375 µs against 440-451 for debit_batch (pgbench).
  // The same results as debit_batch gives for one key: LEAST(balance, n) credits for
  // its n requests, the first ones charged in order, and, when it took none, the key's status.
  {
    version: 7,
    sql: `CREATE FUNCTION debit_one_key(hash text, endpoints text[], refs text[])
     RETURNS TABLE (key_hash text, balance bigint, granted integer, status text, charge_ids bigint[])
     LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
   #variable_conflict use_column
   BEGIN
     RETURN QUERY
     WITH debited AS (
       UPDATE keys SET balance = keys.balance - LEAST(keys.balance, cardinality(endpoints)),
         last_debit = LEAST(keys.balance, cardinality(endpoints))
       WHERE keys.key_hash = hash AND keys.status = 'active' AND keys.balance > 0
       RETURNING keys.id, keys.balance, keys.last_debit
     ), charged AS (
       INSERT INTO charges (key_id, endpoint, idempotency_ref)
       SELECT debited.id, job.endpoint, job.idempotency_ref
       FROM debited, unnest(endpoints, refs) WITH ORDINALITY AS job(endpoint, idempotency_ref, position)
       WHERE job.position <= debited.last_debit ORDER BY job.position
       RETURNING charges.id
     )
     SELECT hash, debited.balance, debited.last_debit,
       CASE WHEN debited.id IS NULL THEN (SELECT keys.status FROM keys WHERE keys.key_hash = hash) ELSE 'active' END,
       (SELECT array_agg(charged.id ORDER BY charged.id) FROM charged)
     FROM (SELECT) AS one LEFT JOIN debited ON true;
   END $$;`,
  },
  // A rolled key's former hashes, each accepted until its time; and the idempotency ref of a
  // top-up on its grant, so a retry of a top-up whose answer was lost grants nothing more.
  {
    version: 9,
    sql: `CREATE TABLE retired_keys (
     key_hash text PRIMARY KEY,
     key_id text NOT NULL REFERENCES keys(id),
     valid_until timestamptz NOT NULL
   );
   CREATE INDEX retired_keys_by_key ON retired_keys(key_id);
   ALTER TABLE credit_grants ADD COLUMN idempotency_ref text;
   CREATE UNIQUE INDEX credit_grants_by_idempotency_ref ON credit_grants(idempotency_ref) WHERE idempotency_ref IS NOT NULL;`,
  },
  // Grants that expire: see the SQLite ledger's migration of the same name for the settlement.
  {
    version: 10,
    sql: `ALTER TABLE credit_grants ADD COLUMN expires_at timestamptz;
   ALTER TABLE credit_grants ADD COLUMN remaining bigint CHECK (remaining >= 0);
   ALTER TABLE keys ADD COLUMN settled_balance bigint;
   ALTER TABLE keys ADD COLUMN expiring_grants integer NOT NULL DEFAULT 0;
   CREATE INDEX credit_grants_expiring ON credit_grants(expires_at) WHERE remaining > 0;
   CREATE INDEX credit_grants_by_key ON credit_grants(key_id);
   CREATE TABLE credit_expiries (
     id bigserial PRIMARY KEY,
     key_id text NOT NULL REFERENCES keys(id),
     grant_id bigint NOT NULL REFERENCES credit_grants(id),
     amount bigint NOT NULL CHECK (amount > 0),
     at timestamptz NOT NULL
   );
   CREATE INDEX credit_expiries_by_key ON credit_expiries(key_id);`,
  },
  // Prices and low-balance events: see the SQLite ledger's migration of the same purpose. The debit
  // functions take each debit's cost and its running total per key (computed by the caller), so a
  // key takes the longest prefix of its debits that its balance covers, never part of one; and they
  // write credits.low and credits.depleted to the outbox when a key's balance crosses the mark.
  {
    version: 11,
    sql: `ALTER TABLE charges ADD COLUMN credits bigint NOT NULL DEFAULT 1 CHECK (credits >= 1);
   ALTER TABLE keys ADD COLUMN prices jsonb;
   ALTER TABLE keys ADD COLUMN low_balance_threshold bigint;
   CREATE TABLE webhook_events (
     id text PRIMARY KEY,
     type text NOT NULL,
     key_id text,
     data jsonb NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     dispatched boolean NOT NULL DEFAULT false
   );
   CREATE INDEX webhook_events_undispatched ON webhook_events(created_at) WHERE NOT dispatched;
   CREATE TABLE webhook_endpoints (
     id text PRIMARY KEY,
     url text NOT NULL,
     secret text NOT NULL,
     events jsonb,
     created_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE TABLE webhook_deliveries (
     id text PRIMARY KEY,
     event_id text NOT NULL REFERENCES webhook_events(id),
     endpoint_id text NOT NULL,
     state text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
     attempts jsonb NOT NULL DEFAULT '[]',
     next_attempt_at timestamptz,
     created_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE state = 'pending';
   CREATE INDEX webhook_deliveries_newest ON webhook_deliveries(created_at, id);
   -- A debit that took a key's balance across its low-balance mark, or to zero: one event per crossing.
   CREATE FUNCTION record_crossings(key_id text, before bigint, after bigint, low_mark bigint) RETURNS void
     LANGUAGE sql AS $$
     INSERT INTO webhook_events (id, type, key_id, data)
     SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), mark.type, key_id,
       jsonb_build_object('key_id', key_id, 'balance', after, 'threshold', mark.at)
     FROM (VALUES ('credits.low', low_mark), ('credits.depleted', 0::bigint)) AS mark(type, at)
     WHERE mark.at IS NOT NULL AND before > mark.at AND after <= mark.at
   $$;
   DROP FUNCTION debit_one_key(text, text[], text[]);
   DROP FUNCTION debit_batch(text[], text[], integer[], text[]);
   -- uniform_cost: every debit's cost when they are all the same (the usual case), so a key takes
   -- LEAST(balance / cost, n) as before prices; NULL makes it add up the running totals.
   CREATE FUNCTION debit_one_key(hash text, endpoints text[], costs bigint[], totals bigint[], refs text[], low_default bigint, uniform_cost bigint)
     RETURNS TABLE (key_hash text, balance bigint, granted integer, status text, charge_ids bigint[])
     LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
   #variable_conflict use_column
   BEGIN
     RETURN QUERY
     WITH debited AS (
       UPDATE keys SET
         balance = keys.balance - CASE WHEN uniform_cost IS NOT NULL
           THEN LEAST(keys.balance / uniform_cost, cardinality(costs)) * uniform_cost
           ELSE coalesce((SELECT max(t) FROM unnest(totals) AS t WHERE t <= keys.balance), 0) END,
         last_debit = CASE WHEN uniform_cost IS NOT NULL
           THEN LEAST(keys.balance / uniform_cost, cardinality(costs))
           ELSE (SELECT count(*) FROM unnest(totals) AS t WHERE t <= keys.balance) END
       WHERE keys.key_hash = hash AND keys.status = 'active' AND keys.balance >= costs[1]
       RETURNING keys.id, keys.balance, keys.last_debit, keys.low_balance_threshold
     ), charged AS (
       INSERT INTO charges (key_id, endpoint, idempotency_ref, credits)
       SELECT debited.id, job.endpoint, job.idempotency_ref, job.cost
       FROM debited, unnest(endpoints, refs, costs) WITH ORDINALITY AS job(endpoint, idempotency_ref, cost, position)
       WHERE job.position <= debited.last_debit ORDER BY job.position
       RETURNING charges.id
     ), crossed AS (
       -- Called only when the balance after is at or under a mark: most debits cross nothing.
       SELECT record_crossings(debited.id, debited.balance + totals[debited.last_debit], debited.balance,
         coalesce(debited.low_balance_threshold, low_default)) FROM debited
       WHERE debited.balance <= greatest(coalesce(debited.low_balance_threshold, low_default), 0)
     )
     SELECT hash, debited.balance, debited.last_debit,
       CASE WHEN debited.id IS NULL THEN (SELECT keys.status FROM keys WHERE keys.key_hash = hash) ELSE 'active' END,
       (SELECT array_agg(charged.id ORDER BY charged.id) FROM charged)
     FROM (SELECT count(*) FROM crossed) AS written LEFT JOIN debited ON true;
   END $$;
   CREATE FUNCTION debit_batch(hashes text[], endpoints text[], costs bigint[], totals bigint[], ordinals integer[], refs text[], low_default bigint,
     uniform_cost bigint)
     RETURNS TABLE (key_hash text, balance bigint, granted integer, status text, charge_ids bigint[])
     LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
   #variable_conflict use_column
   BEGIN
     RETURN QUERY
     WITH job AS (
       SELECT * FROM unnest(hashes, endpoints, costs, totals, ordinals, refs)
         WITH ORDINALITY AS job(key_hash, endpoint, cost, total, ordinal, idempotency_ref, position)
     ), wanted AS (
       SELECT job.key_hash, count(*)::integer AS n, min(job.total) AS first_cost FROM job GROUP BY job.key_hash
     ), locked AS (
       SELECT keys.id FROM keys JOIN wanted ON wanted.key_hash = keys.key_hash ORDER BY keys.id FOR UPDATE OF keys
     ), debited AS (
       UPDATE keys SET
         balance = keys.balance - CASE WHEN uniform_cost IS NOT NULL
           THEN LEAST(keys.balance / uniform_cost, wanted.n) * uniform_cost
           ELSE coalesce((SELECT max(job.total) FROM job WHERE job.key_hash = keys.key_hash AND job.total <= keys.balance), 0) END,
         last_debit = CASE WHEN uniform_cost IS NOT NULL
           THEN LEAST(keys.balance / uniform_cost, wanted.n)
           ELSE (SELECT count(*) FROM job WHERE job.key_hash = keys.key_hash AND job.total <= keys.balance) END
       FROM wanted, locked
       WHERE keys.id = locked.id AND keys.key_hash = wanted.key_hash AND keys.status = 'active' AND keys.balance >= wanted.first_cost
       RETURNING keys.id, keys.key_hash, keys.balance, keys.last_debit, keys.low_balance_threshold
     ), charged AS (
       INSERT INTO charges (key_id, endpoint, idempotency_ref, credits)
       SELECT debited.id, job.endpoint, job.idempotency_ref, job.cost FROM job JOIN debited ON debited.key_hash = job.key_hash
       WHERE job.ordinal <= debited.last_debit ORDER BY job.position
       RETURNING charges.id, charges.key_id
     ), crossed AS (
       SELECT record_crossings(debited.id, debited.balance + spent.total, debited.balance, coalesce(debited.low_balance_threshold, low_default))
       FROM debited JOIN job AS spent ON spent.key_hash = debited.key_hash AND spent.ordinal = debited.last_debit
       WHERE debited.balance <= greatest(coalesce(debited.low_balance_threshold, low_default), 0)
     )
     SELECT wanted.key_hash, debited.balance, debited.last_debit, keys.status,
       (SELECT array_agg(charged.id ORDER BY charged.id) FROM charged WHERE charged.key_id = debited.id)
     FROM wanted LEFT JOIN debited ON debited.key_hash = wanted.key_hash LEFT JOIN keys ON keys.key_hash = wanted.key_hash
     WHERE (SELECT count(*) FROM crossed) >= 0;
   END $$;`,
  },
  // Refill plans: see the SQLite ledger's migration of the same name.
  {
    version: 12,
    sql: `CREATE TABLE refill_rules (
     key_id text PRIMARY KEY REFERENCES keys(id),
     credits bigint NOT NULL CHECK (credits >= 1),
     interval text NOT NULL CHECK (interval IN ('day', 'week', 'month')),
     mode text NOT NULL CHECK (mode IN ('add', 'replace')),
     anchor timestamptz NOT NULL,
     last_period integer NOT NULL,
     next_refill_at timestamptz NOT NULL
   );
   CREATE INDEX refill_rules_due ON refill_rules(next_refill_at);`,
  },
  // See the SQLite ledger's migration of the same column.
  {
    version: 14,
    sql: `ALTER TABLE keys ADD COLUMN refill_paid_until timestamptz;
   UPDATE keys SET refill_paid_until = r.next_refill_at FROM refill_rules r WHERE r.key_id = keys.id AND r.last_period >= 0;`,
  },
  // See the SQLite ledger's migration of the same columns.
  {
    version: 15,
    sql: `ALTER TABLE keys ADD COLUMN expires_at timestamptz, ADD COLUMN metadata jsonb, ADD COLUMN expiry_announced boolean NOT NULL DEFAULT false,
     ADD COLUMN spend_caps jsonb;
   CREATE INDEX keys_expiring ON keys(expires_at) WHERE expires_at IS NOT NULL AND NOT expiry_announced;
   CREATE TABLE key_spend (
     key_id text NOT NULL,
     interval text NOT NULL CHECK (interval IN ('day', 'week', 'month')),
     period_start timestamptz NOT NULL,
     spent bigint NOT NULL,
     cap_reached_sent boolean NOT NULL DEFAULT false,
     PRIMARY KEY (key_id, interval, period_start)
   );`,
  },
  // Accounts: see the SQLite ledger's migration of the same name. The debit functions now spend
  // from the key's account: a batch groups its debits by account (several keys may share one),
  // locks the accounts in id order, and takes for each the longest prefix of its debits, in
  // arrival order, that its balance covers. Every instance must run this release once it is applied.
  {
    version: 17,
    sql: `CREATE TABLE accounts (
     id text PRIMARY KEY,
     name text NOT NULL,
     external_id text UNIQUE,
     metadata jsonb,
     balance bigint NOT NULL CHECK (balance >= 0),
     settled_balance bigint,
     expiring_grants integer NOT NULL DEFAULT 0,
     prices jsonb,
     low_balance_threshold bigint,
     refill_paid_until timestamptz,
     spend_caps jsonb,
     created_at timestamptz NOT NULL DEFAULT now(),
     last_debit bigint NOT NULL DEFAULT 0
   );
   INSERT INTO accounts (id, name, balance, settled_balance, expiring_grants, prices, low_balance_threshold, refill_paid_until, created_at)
     SELECT 'acct_' || CASE WHEN left(id, 4) = 'key_' THEN substr(id, 5) ELSE id END, name, balance, settled_balance, expiring_grants,
       prices, low_balance_threshold, refill_paid_until, created_at FROM keys;
   ALTER TABLE keys ADD COLUMN account_id text REFERENCES accounts(id);
   UPDATE keys SET account_id = 'acct_' || CASE WHEN left(id, 4) = 'key_' THEN substr(id, 5) ELSE id END;
   ALTER TABLE keys ALTER COLUMN account_id SET NOT NULL;
   CREATE INDEX keys_by_account ON keys(account_id, created_at);
   ALTER TABLE credit_grants DROP CONSTRAINT credit_grants_key_id_fkey;
   ALTER TABLE credit_grants RENAME COLUMN key_id TO account_id;
   UPDATE credit_grants g SET account_id = k.account_id FROM keys k WHERE k.id = g.account_id;
   ALTER TABLE credit_grants ADD FOREIGN KEY (account_id) REFERENCES accounts(id);
   ALTER INDEX credit_grants_by_key RENAME TO credit_grants_by_account;
   ALTER TABLE credit_expiries DROP CONSTRAINT credit_expiries_key_id_fkey;
   ALTER TABLE credit_expiries RENAME COLUMN key_id TO account_id;
   UPDATE credit_expiries e SET account_id = k.account_id FROM keys k WHERE k.id = e.account_id;
   ALTER TABLE credit_expiries ADD FOREIGN KEY (account_id) REFERENCES accounts(id);
   ALTER INDEX credit_expiries_by_key RENAME TO credit_expiries_by_account;
   ALTER TABLE refill_rules DROP CONSTRAINT refill_rules_key_id_fkey;
   ALTER TABLE refill_rules RENAME COLUMN key_id TO account_id;
   UPDATE refill_rules r SET account_id = k.account_id FROM keys k WHERE k.id = r.account_id;
   ALTER TABLE refill_rules ADD FOREIGN KEY (account_id) REFERENCES accounts(id);
   ALTER TABLE webhook_events ADD COLUMN account_id text;
   UPDATE webhook_events e SET account_id = k.account_id, data = e.data || jsonb_build_object('account_id', k.account_id) FROM keys k WHERE k.id = e.key_id;
   CREATE TABLE account_spend (
     account_id text NOT NULL,
     interval text NOT NULL CHECK (interval IN ('day', 'week', 'month')),
     period_start timestamptz NOT NULL,
     spent bigint NOT NULL,
     cap_reached_sent boolean NOT NULL DEFAULT false,
     PRIMARY KEY (account_id, interval, period_start)
   );
   DROP FUNCTION debit_one_key(text, text[], bigint[], bigint[], text[], bigint, bigint);
   DROP FUNCTION debit_batch(text[], text[], bigint[], bigint[], integer[], text[], bigint, bigint);
   DROP FUNCTION record_crossings(text, bigint, bigint, bigint);
   ALTER TABLE keys DROP COLUMN balance, DROP COLUMN settled_balance, DROP COLUMN expiring_grants, DROP COLUMN prices,
     DROP COLUMN low_balance_threshold, DROP COLUMN refill_paid_until, DROP COLUMN last_debit;
   -- A debit that took an account's balance across its low-balance mark, or to zero: one event per crossing.
   CREATE FUNCTION record_crossings(account text, spender text, before bigint, after bigint, low_mark bigint) RETURNS void
     LANGUAGE sql AS $$
     INSERT INTO webhook_events (id, type, account_id, key_id, data)
     SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), mark.type, account, spender,
       jsonb_build_object('account_id', account, 'key_id', spender, 'balance', after, 'threshold', mark.at)
     FROM (VALUES ('credits.low', low_mark), ('credits.depleted', 0::bigint)) AS mark(type, at)
     WHERE mark.at IS NOT NULL AND before > mark.at AND after <= mark.at
   $$;
   CREATE FUNCTION debit_one_key(hash text, endpoints text[], costs bigint[], totals bigint[], refs text[], low_default bigint, uniform_cost bigint)
     RETURNS TABLE (key_hash text, balance bigint, granted integer, status text, charge_ids bigint[])
     LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
   #variable_conflict use_column
   BEGIN
     RETURN QUERY
     WITH spender AS (
       SELECT keys.id, keys.account_id FROM keys WHERE keys.key_hash = hash AND keys.status = 'active'
     ), debited AS (
       UPDATE accounts SET
         balance = accounts.balance - CASE WHEN uniform_cost IS NOT NULL
           THEN LEAST(accounts.balance / uniform_cost, cardinality(costs)) * uniform_cost
           ELSE coalesce((SELECT max(t) FROM unnest(totals) AS t WHERE t <= accounts.balance), 0) END,
         last_debit = CASE WHEN uniform_cost IS NOT NULL
           THEN LEAST(accounts.balance / uniform_cost, cardinality(costs))
           ELSE (SELECT count(*) FROM unnest(totals) AS t WHERE t <= accounts.balance) END
       FROM spender WHERE accounts.id = spender.account_id AND accounts.balance >= costs[1]
       RETURNING spender.id AS key_id, accounts.id, accounts.balance, accounts.last_debit, accounts.low_balance_threshold
     ), charged AS (
       INSERT INTO charges (key_id, endpoint, idempotency_ref, credits)
       SELECT debited.key_id, job.endpoint, job.idempotency_ref, job.cost
       FROM debited, unnest(endpoints, refs, costs) WITH ORDINALITY AS job(endpoint, idempotency_ref, cost, position)
       WHERE job.position <= debited.last_debit ORDER BY job.position
       RETURNING charges.id
     ), crossed AS (
       -- Called only when the balance after is at or under a mark: most debits cross nothing.
       SELECT record_crossings(debited.id, debited.key_id, debited.balance + totals[debited.last_debit], debited.balance,
         coalesce(debited.low_balance_threshold, low_default)) FROM debited
       WHERE debited.balance <= greatest(coalesce(debited.low_balance_threshold, low_default), 0)
     )
     SELECT hash, debited.balance, debited.last_debit::integer,
       CASE WHEN debited.id IS NULL THEN (SELECT keys.status FROM keys WHERE keys.key_hash = hash) ELSE 'active' END,
       (SELECT array_agg(charged.id ORDER BY charged.id) FROM charged)
     FROM (SELECT count(*) FROM crossed) AS written LEFT JOIN debited ON true;
   END $$;
   -- One row per debit, in the order given: its charge (null when refused), the balance after it,
   -- and its key's status. A debit's rank and running total are counted among its account's debits.
   CREATE FUNCTION debit_batch(hashes text[], endpoints text[], costs bigint[], refs text[], low_default bigint)
     RETURNS TABLE (slot integer, charge_id bigint, balance bigint, status text)
     LANGUAGE plpgsql SET enable_seqscan = off SET jit = off AS $$
   #variable_conflict use_column
   BEGIN
     RETURN QUERY
     WITH job AS (
       SELECT * FROM unnest(hashes, endpoints, costs, refs) WITH ORDINALITY AS job(key_hash, endpoint, cost, idempotency_ref, position)
     ), live AS (
       SELECT job.*, keys.id AS key_id, keys.account_id,
         row_number() OVER spending AS ordinal, (sum(job.cost) OVER spending)::bigint AS total
       FROM job JOIN keys ON keys.key_hash = job.key_hash AND keys.status = 'active'
       WINDOW spending AS (PARTITION BY keys.account_id ORDER BY job.position)
     ), wanted AS (
       SELECT live.account_id, min(live.total) AS first_cost FROM live GROUP BY live.account_id
     ), locked AS (
       SELECT accounts.id FROM accounts JOIN wanted ON wanted.account_id = accounts.id ORDER BY accounts.id FOR UPDATE OF accounts
     ), debited AS (
       UPDATE accounts SET
         balance = accounts.balance - coalesce((SELECT max(live.total) FROM live WHERE live.account_id = accounts.id AND live.total <= accounts.balance), 0),
         last_debit = (SELECT count(*) FROM live WHERE live.account_id = accounts.id AND live.total <= accounts.balance)
       FROM wanted, locked
       WHERE accounts.id = locked.id AND accounts.id = wanted.account_id AND accounts.balance >= wanted.first_cost
       RETURNING accounts.id, accounts.balance, accounts.last_debit, accounts.low_balance_threshold
     ), spent AS (
       SELECT live.*, debited.balance AS balance_after, debited.low_balance_threshold, debited.last_debit
       FROM live JOIN debited ON debited.id = live.account_id WHERE live.ordinal <= debited.last_debit
     ), charged AS (
       INSERT INTO charges (key_id, endpoint, idempotency_ref, credits)
       SELECT spent.key_id, spent.endpoint, spent.idempotency_ref, spent.cost FROM spent ORDER BY spent.position
       RETURNING charges.id
     ), charge_rank AS (
       SELECT charged.id, row_number() OVER (ORDER BY charged.id) AS rank FROM charged
     ), spent_rank AS (
       SELECT spent.*, row_number() OVER (ORDER BY spent.position) AS rank,
         max(spent.total) OVER (PARTITION BY spent.account_id) AS account_spent FROM spent
     ), crossed AS (
       SELECT record_crossings(s.account_id, s.key_id, s.balance_after + s.account_spent, s.balance_after, coalesce(s.low_balance_threshold, low_default))
       FROM spent_rank s WHERE s.ordinal = s.last_debit AND s.balance_after <= greatest(coalesce(s.low_balance_threshold, low_default), 0)
     )
     SELECT job.position::integer, charge_rank.id, s.balance_after + s.account_spent - s.total, keys.status
     FROM job LEFT JOIN spent_rank s ON s.position = job.position LEFT JOIN charge_rank ON charge_rank.rank = s.rank
       LEFT JOIN keys ON keys.key_hash = job.key_hash
     WHERE (SELECT count(*) FROM crossed) >= 0 ORDER BY job.position;
   END $$;`,
  },
  // See the SQLite ledger's migration of the same table.
  {
    version: 21,
    sql: `CREATE TABLE cap_counted (holder_id text PRIMARY KEY, charge_id bigint NOT NULL);
   INSERT INTO cap_counted (holder_id, charge_id)
     SELECT id, (SELECT coalesce(max(id), 0) FROM charges) FROM keys WHERE spend_caps IS NOT NULL
     UNION ALL SELECT id, (SELECT coalesce(max(id), 0) FROM charges) FROM accounts WHERE spend_caps IS NOT NULL;`,
  },
];
