import type Database from 'better-sqlite3';
import { ADMIN_SQLITE_MIGRATIONS } from '../admin/sqlite-migrations.js';
import { BILLING_SQLITE_MIGRATIONS } from '../billing/sqlite-migrations.js';
import { FACES_SQLITE_MIGRATIONS } from '../faces/sqlite-migrations.js';
import { inVersionOrder } from '../platform/migrations.js';
import { migrateSqlite } from '../platform/sqlite-open.js';
import { PORTAL_SQLITE_MIGRATIONS } from '../portal/sqlite-migrations.js';
import { SYNONYMS_SQLITE_MIGRATIONS } from '../synonyms/sqlite-migrations.js';

/**
 * The versioned schema of ledger.sqlite: accounts and their balances, keys, charges, idempotency entries, the face
 * gallery, admin tokens, the audit log and webhooks. The corpus lives in a file of its own, with its
 * schema beside it (corpus/corpus-schema.ts), so that a long ingest, which holds the corpus
 * write lock, never delays a debit.
 */
export const LEDGER_MIGRATIONS: readonly string[] = inVersionOrder(
  ADMIN_SQLITE_MIGRATIONS,
  BILLING_SQLITE_MIGRATIONS,
  FACES_SQLITE_MIGRATIONS,
  PORTAL_SQLITE_MIGRATIONS,
  SYNONYMS_SQLITE_MIGRATIONS,
);

export function migrateLedger(db: Database.Database): void {
  migrateSqlite(db, LEDGER_MIGRATIONS);
}
