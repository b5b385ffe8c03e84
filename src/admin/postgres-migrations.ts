import type { Migration } from '../platform/migrations.js';

/** Admin's part of PostgreSQL's schema: its migrations, each with its place in the one order every store applies (store/postgres-schema.ts). */
export const ADMIN_POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 8,
    sql: `CREATE TABLE admin_tokens (
     id text PRIMARY KEY,
     token_hash text NOT NULL UNIQUE,
     name text NOT NULL,
     read_only boolean NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now(),
     revoked_at timestamptz
   );
   CREATE TABLE audit_log (
     id bigserial PRIMARY KEY,
     at timestamptz NOT NULL DEFAULT now(),
     actor text NOT NULL,
     action text NOT NULL,
     target text,
     request_id text,
     detail jsonb NOT NULL
   );
   CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'the audit log is append-only'; END $$;
   CREATE TRIGGER audit_log_append_only BEFORE DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();`,
  },
  // See the SQLite ledger's migration of the same column.
  {
    version: 16,
    sql: `ALTER TABLE admin_tokens ADD COLUMN scopes text NOT NULL DEFAULT '';
   UPDATE admin_tokens SET scopes = CASE WHEN read_only THEN 'accounts:read keys:read documents:read webhooks:read audit:read metrics:read' ELSE 'accounts:read accounts:write keys:read keys:write credits:write documents:read documents:write webhooks:read webhooks:write audit:read metrics:read' END;`,
  },
];
