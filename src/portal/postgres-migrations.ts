import type { Migration } from '../platform/migrations.js';

/** Portal's part of PostgreSQL's schema: its migrations, each with its place in the one order every store applies (store/postgres-schema.ts). */
export const PORTAL_POSTGRES_MIGRATIONS: readonly Migration[] = [
  // See the SQLite ledger's migration of the same tables.
  {
    version: 18,
    sql: `CREATE TABLE portal_links (
     token_hash text PRIMARY KEY,
     account_id text NOT NULL REFERENCES accounts(id),
     expires_at timestamptz NOT NULL,
     used_at timestamptz
   );
   CREATE TABLE portal_sessions (
     session_hash text PRIMARY KEY,
     account_id text NOT NULL REFERENCES accounts(id),
     csrf text NOT NULL,
     expires_at timestamptz NOT NULL
   );`,
  },
  // See the SQLite ledger's migration of the same columns.
  {
    version: 20,
    sql: `ALTER TABLE portal_links ADD COLUMN origin text NOT NULL DEFAULT '';
   ALTER TABLE portal_sessions ADD COLUMN origin text NOT NULL DEFAULT '';
   CREATE INDEX portal_sessions_by_account ON portal_sessions(account_id);
   CREATE INDEX portal_links_by_account ON portal_links(account_id);
   UPDATE admin_tokens SET scopes = scopes || ' portal:write' WHERE scopes = 'accounts:read accounts:write keys:read keys:write credits:write documents:read documents:write webhooks:read webhooks:write audit:read metrics:read';`,
  },
];
