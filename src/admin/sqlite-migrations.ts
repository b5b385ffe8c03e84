import type { Migration } from '../platform/migrations.js';

/** Admin's part of ledger.sqlite's schema: its migrations, each with its place in the one order every store applies (store/sqlite-schema.ts). */
export const ADMIN_SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 4,
    sql: `CREATE TABLE admin_tokens (
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
  },
  // Admin tokens' scopes (admin/admin-scopes.ts), space-separated: a token keeps what it could do,
  // every scope, or every :read one when it was read-only.
  {
    version: 11,
    sql: `ALTER TABLE admin_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT '';
   UPDATE admin_tokens SET scopes = CASE WHEN read_only = 1 THEN 'accounts:read keys:read documents:read webhooks:read audit:read metrics:read' ELSE 'accounts:read accounts:write keys:read keys:write credits:write documents:read documents:write webhooks:read webhooks:write audit:read metrics:read' END;`,
  },
];
