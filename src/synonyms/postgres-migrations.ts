import type { Migration } from '../platform/migrations.js';

/** Synonyms' part of PostgreSQL's schema (store/postgres-schema.ts): one row holding every rule. */
export const SYNONYMS_POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 22,
    sql: `CREATE TABLE synonym_rules (
     id integer PRIMARY KEY CHECK (id = 1),
     rules jsonb NOT NULL,
     version bigint NOT NULL,
     updated_at timestamptz NOT NULL DEFAULT now()
   );`,
  },
];
