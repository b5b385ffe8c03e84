import type { Pool } from 'pg';
import { ADMIN_POSTGRES_MIGRATIONS } from '../admin/postgres-migrations.js';
import { BILLING_POSTGRES_MIGRATIONS } from '../billing/postgres-migrations.js';
import { DOCUMENTS_POSTGRES_MIGRATIONS } from '../documents/postgres-migrations.js';
import { FACES_POSTGRES_MIGRATIONS } from '../faces/postgres-migrations.js';
import { inVersionOrder } from '../platform/migrations.js';
import { PORTAL_POSTGRES_MIGRATIONS } from '../portal/postgres-migrations.js';
import { SYNONYMS_POSTGRES_MIGRATIONS } from '../synonyms/postgres-migrations.js';

/** Any constant shared by every instance: serialises migrations across instances starting together. */
const MIGRATION_LOCK = 7_204_311_901;

/**
 * Versioned migrations, applied in order, each in its own transaction, under an advisory lock so
 * that several instances starting at once apply each exactly once.
 */
export const POSTGRES_MIGRATIONS: readonly string[] = inVersionOrder(
  ADMIN_POSTGRES_MIGRATIONS,
  BILLING_POSTGRES_MIGRATIONS,
  DOCUMENTS_POSTGRES_MIGRATIONS,
  FACES_POSTGRES_MIGRATIONS,
  PORTAL_POSTGRES_MIGRATIONS,
  SYNONYMS_POSTGRES_MIGRATIONS,
);

/** Applies the migrations this database lacks; returns the versions applied now. */
export async function migratePostgres(pool: Pool): Promise<number[]> {
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
      const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
      for (let version = (rows[0]?.version ?? 0) + 1; version <= POSTGRES_MIGRATIONS.length; version++) {
        await client.query('BEGIN');
        try {
          await client.query(POSTGRES_MIGRATIONS[version - 1] as string);
          await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw error;
        }
        applied.push(version);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
  return applied;
}
