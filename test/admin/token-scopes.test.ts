import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ADMIN_SCOPES, READ_SCOPES } from '../../src/admin/admin-scopes.js';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres-schema.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { LEDGER_MIGRATIONS } from '../../src/store/sqlite-schema.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/helper.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES } from '../support/pg.js';

async function assertKeptWhatTheyCouldDo(store: Store, full: string, reader: string): Promise<void> {
  const migrated = new AdminTokens(store.admin);
  const fullCheck = await migrated.check(`Bearer ${full}`);
  const readerCheck = await migrated.check(`Bearer ${reader}`);
  assert.deepEqual(fullCheck.outcome === 'ok' && fullCheck.token.scopes, [...ADMIN_SCOPES]);
  assert.deepEqual(readerCheck.outcome === 'ok' && readerCheck.token.scopes, [...READ_SCOPES]);
}

/** The migration that gave tokens scopes, and every one after it that changes tokens' scopes. */
function scopesMigration(migrations: readonly string[]): string {
  const first = migrations.findIndex((sql) => sql.includes('ADD COLUMN scopes'));
  const later = migrations.slice(first + 1).filter((sql) => sql.includes('UPDATE admin_tokens SET scopes'));
  return [migrations[first], ...later.map((sql) => sql.slice(sql.indexOf('UPDATE admin_tokens SET scopes')))].join(';\n');
}

/** Tokens made before scopes existed keep what they could do: every scope, or every :read one. */
describe('admin token scopes: tokens of the previous release', () => {
  it('on SQLite', async () => {
    const dir = tempDir();
    try {
      const seed = new SqliteStore(dir.path);
      const tokens = new AdminTokens(seed.admin);
      const full = await tokens.create('full', false);
      const reader = await tokens.create('reader', true);
      await seed.close();
      // The tokens as the release before scopes left them: no scopes column; then its migration.
      const db = new Database(join(dir.path, 'ledger.sqlite'));
      db.exec('ALTER TABLE admin_tokens DROP COLUMN scopes');
      db.exec(scopesMigration(LEDGER_MIGRATIONS));
      db.close();

      const store = new SqliteStore(dir.path);
      try {
        await assertKeptWhatTheyCouldDo(store, full.token, reader.token);
      } finally {
        await store.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('on PostgreSQL', { skip: SKIP_POSTGRES }, async () => {
    const database = await createTestDatabase();
    try {
      const seed = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
      const tokens = new AdminTokens(seed.admin);
      const full = await tokens.create('full', false);
      const reader = await tokens.create('reader', true);
      await seed.close();
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      await client.query('ALTER TABLE admin_tokens DROP COLUMN scopes');
      await client.query(scopesMigration(POSTGRES_MIGRATIONS));
      await client.end();

      const store = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
      try {
        await assertKeptWhatTheyCouldDo(store, full.token, reader.token);
      } finally {
        await store.close();
      }
    } finally {
      await database.drop();
    }
  });
});
