import type { Migration } from '../platform/migrations.js';

/** Synonyms' part of ledger.sqlite's schema (store/sqlite-schema.ts): one row holding every rule. */
export const SYNONYMS_SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 16,
    sql: `CREATE TABLE synonym_rules (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     rules TEXT NOT NULL,
     version INTEGER NOT NULL,
     updated_at TEXT NOT NULL
   );`,
  },
];
