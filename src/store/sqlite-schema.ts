import type Database from 'better-sqlite3';

/**
 * Versioned schema for the two embedded databases. The ledger (keys, balances, charges) and the
 * corpus (documents and their indexes) live in separate files so that a long ingest, which holds
 * the corpus write lock, never delays a debit.
 */
const ledgerMigrations: string[] = [
  `CREATE TABLE keys (
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
  `ALTER TABLE keys ADD COLUMN rate_limit REAL;
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
  `CREATE TABLE faces (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     doc_id TEXT NOT NULL UNIQUE,
     descriptor BLOB NOT NULL,
     face_file TEXT NOT NULL,
     attributes TEXT,
     engine TEXT NOT NULL,
     enrolled_at TEXT NOT NULL
   );`,
  `CREATE TABLE admin_tokens (
     id TEXT PRIMARY KEY,
     token_hash TEXT NOT NULL UNIQUE,
     name TEXT NOT NULL,
     read_only INTEGER NOT NULL CHECK (read_only IN (0, 1)),
     created_at TEXT NOT NULL,
     revoked_at TEXT
   );
   CREATE TABLE audit_log (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at TEXT NOT NULL,
     actor TEXT NOT NULL,
     action TEXT NOT NULL,
     target TEXT,
     request_id TEXT,
     detail TEXT NOT NULL
   );
   CREATE TRIGGER audit_log_append_only BEFORE DELETE ON audit_log
   BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;`,
  // A rolled key's former hashes, each accepted until its time; and the idempotency ref of a
  // top-up on its grant, so a retry of a top-up whose answer was lost grants nothing more.
  `CREATE TABLE retired_keys (
     key_hash TEXT PRIMARY KEY,
     key_id TEXT NOT NULL REFERENCES keys(id),
     valid_until TEXT NOT NULL
   );
   CREATE INDEX retired_keys_by_key ON retired_keys(key_id);
   ALTER TABLE credit_grants ADD COLUMN idempotency_ref TEXT;
   CREATE UNIQUE INDEX credit_grants_by_idempotency_ref ON credit_grants(idempotency_ref) WHERE idempotency_ref IS NOT NULL;`,
  // Grants that expire. A debit only lowers keys.balance; which grant it spent is settled later,
  // soonest-expiring first, whenever the key is granted or a grant expires: the credits spent since
  // the last settlement are settled_balance - balance. An expiring grant's remaining is as of then.
  `ALTER TABLE credit_grants ADD COLUMN expires_at TEXT;
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
  // Prices: a charge records the credits it took; a key may carry its own prices. Webhooks: events
  // are written in the transaction of the change that causes them (the outbox), then delivered to
  // every endpoint subscribed, each delivery with its attempts.
  `ALTER TABLE charges ADD COLUMN credits INTEGER NOT NULL DEFAULT 1 CHECK (credits >= 1);
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
  // Refill plans (billing/refills.ts): period last_period was the last granted; next_refill_at is
  // the start of the one after, so that due plans are found by an index.
  `CREATE TABLE refill_rules (
     key_id TEXT PRIMARY KEY REFERENCES keys(id),
     credits INTEGER NOT NULL CHECK (credits >= 1),
     interval TEXT NOT NULL CHECK (interval IN ('day', 'week', 'month')),
     mode TEXT NOT NULL CHECK (mode IN ('add', 'replace')),
     anchor TEXT NOT NULL,
     last_period INTEGER NOT NULL,
     next_refill_at TEXT NOT NULL
   );
   CREATE INDEX refill_rules_due ON refill_rules(next_refill_at);`,
  // The end of the last period a key's refills paid for (billing/refills.ts, planAnchor): a plan
  // set again, changed, or ended and set anew starts there, never granting twice in one period.
  `ALTER TABLE keys ADD COLUMN refill_paid_until TEXT;
   UPDATE keys SET refill_paid_until = (SELECT next_refill_at FROM refill_rules r WHERE r.key_id = keys.id AND r.last_period >= 0);`,
];

const tokenizer = `tokenize = 'porter unicode61 remove_diacritics 2'`;

export const corpusMigrations: readonly string[] = [
  `CREATE TABLE documents (
     id INTEGER PRIMARY KEY,
     doc_id TEXT NOT NULL UNIQUE,
     title TEXT NOT NULL,
     text TEXT NOT NULL,
     metadata TEXT NOT NULL
   );
   CREATE VIRTUAL TABLE documents_fts USING fts5(title, text, content = 'documents', content_rowid = 'id', ${tokenizer});
   CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
     INSERT INTO documents_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
   END;
   CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
     INSERT INTO documents_fts(documents_fts, rowid, title, text) VALUES ('delete', old.id, old.title, old.text);
     DELETE FROM doc_fields WHERE doc_rowid = old.id;
   END;
   CREATE TABLE doc_fields (
     id INTEGER PRIMARY KEY,
     doc_rowid INTEGER NOT NULL,
     field TEXT NOT NULL,
     vtype TEXT NOT NULL CHECK (vtype IN ('s', 'n', 'b', 'z')),
     value
   );
   CREATE INDEX doc_fields_by_value ON doc_fields(field, value);
   CREATE INDEX doc_fields_by_doc ON doc_fields(doc_rowid);
   CREATE VIRTUAL TABLE doc_fields_fts USING fts5(value, content = 'doc_fields', content_rowid = 'id', ${tokenizer});
   CREATE TRIGGER doc_fields_ai AFTER INSERT ON doc_fields WHEN new.vtype = 's' BEGIN
     INSERT INTO doc_fields_fts(rowid, value) VALUES (new.id, new.value);
   END;
   CREATE TRIGGER doc_fields_ad AFTER DELETE ON doc_fields WHEN old.vtype = 's' BEGIN
     INSERT INTO doc_fields_fts(doc_fields_fts, rowid, value) VALUES ('delete', old.id, old.value);
   END;`,
  // Search and filters move to the in-memory index (src/store/text-index), built from each
  // document's stored term vector, which holds metadata values as terms too. Row ids become AUTOINCREMENT, so a process that has indexed up to
  // some row id finds every later document above it; deletions are logged, with the deleted
  // document's terms, for the same reason.
  `DROP TRIGGER documents_ai;
   DROP TRIGGER documents_ad;
   DROP TABLE documents_fts;
   DROP TABLE doc_fields_fts;
   DROP TABLE doc_fields;
   CREATE TABLE documents_v2 (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     doc_id TEXT NOT NULL UNIQUE,
     title TEXT NOT NULL,
     text TEXT NOT NULL,
     metadata TEXT NOT NULL,
     title_length INTEGER,
     text_length INTEGER,
     terms BLOB
   );
   INSERT INTO documents_v2 (id, doc_id, title, text, metadata) SELECT id, doc_id, title, text, metadata FROM documents;
   DROP TABLE documents;
   ALTER TABLE documents_v2 RENAME TO documents;
   CREATE INDEX documents_unanalysed ON documents(id) WHERE terms IS NULL;
   CREATE TABLE terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
   CREATE TABLE removed_documents (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     doc_rowid INTEGER NOT NULL,
     terms BLOB,
     removed_at INTEGER NOT NULL
   );
   CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
     INSERT INTO removed_documents (doc_rowid, terms, removed_at) VALUES (old.id, old.terms, unixepoch());
   END;`,
  // The analyser now also indexes compounds ("IL-6") joined: every document is analysed again on
  // the next open, so that documents and queries agree.
  `UPDATE documents SET title_length = NULL, text_length = NULL, terms = NULL;`,
  // A persisted search index names the corpus file it was built from: a file replaced by another
  // (restored, or built anew) numbers its rows afresh, and must not be caught up from it. The
  // identity changes too when the documents are analysed anew (see CorpusFile).
  `CREATE TABLE IF NOT EXISTS corpus_identity (id TEXT NOT NULL);
   INSERT INTO corpus_identity (id) SELECT lower(hex(randomblob(16))) WHERE NOT EXISTS (SELECT 1 FROM corpus_identity);`,
];

function migrate(db: Database.Database, migrations: readonly string[]): void {
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    for (let version = current; version < migrations.length; version++) {
      db.exec(migrations[version]);
    }
    if (current < migrations.length) db.pragma(`user_version = ${migrations.length}`);
  }).immediate();
}

export function migrateLedger(db: Database.Database): void {
  migrate(db, ledgerMigrations);
}

export function migrateCorpus(db: Database.Database): void {
  migrate(db, corpusMigrations);
}
