import type { Migration } from '../platform/migrations.js';

/** Portal's part of ledger.sqlite's schema: its migrations, each with its place in the one order every store applies (store/sqlite-schema.ts). */
export const PORTAL_SQLITE_MIGRATIONS: readonly Migration[] = [
  // The customer portal (src/portal): single-use sign-in links and the cookie sessions they open,
  // both stored by the hash of their token.
  {
    version: 13,
    sql: `CREATE TABLE portal_links (
     token_hash TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     expires_at TEXT NOT NULL,
     used_at TEXT
   ) WITHOUT ROWID;
   CREATE TABLE portal_sessions (
     session_hash TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     csrf TEXT NOT NULL,
     expires_at TEXT NOT NULL
   ) WITHOUT ROWID;`,
  },
  // Who opened a portal link or session: the admin token that made the link, for the audit log.
  // Portal links get a scope of their own (portal:write): a token that had every scope keeps them all.
  {
    version: 14,
    sql: `ALTER TABLE portal_links ADD COLUMN origin TEXT NOT NULL DEFAULT '';
   ALTER TABLE portal_sessions ADD COLUMN origin TEXT NOT NULL DEFAULT '';
   CREATE INDEX portal_sessions_by_account ON portal_sessions(account_id);
   CREATE INDEX portal_links_by_account ON portal_links(account_id);
   UPDATE admin_tokens SET scopes = scopes || ' portal:write' WHERE scopes = 'accounts:read accounts:write keys:read keys:write credits:write documents:read documents:write webhooks:read webhooks:write audit:read metrics:read';`,
  },
];
