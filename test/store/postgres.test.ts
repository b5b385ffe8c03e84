import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PostgresStore } from '../../src/store/postgres.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES } from '../pg.js';
import { storeContract } from './store-contract.js';

if (SKIP_POSTGRES) {
  describe('Store contract: postgres', () => it('runs against a real PostgreSQL', { skip: SKIP_POSTGRES }, () => undefined));
} else {
  storeContract('postgres', async () => {
    const database = await createTestDatabase();
    const store = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await database.drop();
      },
    };
  });

  describe('postgres specifics', () => {
    it('applies migrations once, even when several instances start together', async () => {
      const database = await createTestDatabase();
      try {
        const applied = await Promise.all(
          Array.from({ length: 4 }, () => PostgresStore.migrate({ url: database.url, ...PG_TEST_OPTIONS })),
        );
        assert.deepEqual(applied.flat(), [1]);
        assert.deepEqual(await PostgresStore.migrate({ url: database.url, ...PG_TEST_OPTIONS }), []);
      } finally {
        await database.drop();
      }
    });
  });
}
