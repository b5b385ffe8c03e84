import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { hashApiKey } from '../../src/billing/keys.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { eventually, tempDir } from '../support/helper.js';
import { storeContract } from './store-contract.js';

storeContract('sqlite', async () => {
  const dir = tempDir();
  const store = new SqliteStore(dir.path);
  return {
    store,
    cleanup: async () => {
      await store.close();
      dir.remove();
    },
  };
});

describe('sqlite specifics', () => {
  it('keeps keys hashed at rest: no file of the data folder holds a plain key', async () => {
    const dir = tempDir();
    const store = new SqliteStore(dir.path);
    try {
      const { key } = await new KeyAdmin(store.ledger).create(5, 'at-rest');
      await store.ledger.debit(hashApiKey(key), '/query');
      const files = readdirSync(dir.path).map((name) => readFileSync(join(dir.path, name)).toString('latin1'));
      assert.ok(
        files.some((content) => content.includes(hashApiKey(key))),
        'the hash is stored',
      );
      assert.ok(
        files.every((content) => !content.includes(key) && !content.toLowerCase().includes(key)),
        'the plain key is not',
      );
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it('checkpoints the ledger in the background for a long-running service, not on the request path', async () => {
    const dir = tempDir();
    const store = new SqliteStore(dir.path, { backgroundCheckpoints: true });
    try {
      const { key } = await new KeyAdmin(store.ledger).create(100_000, 'busy');
      const ledger = join(dir.path, 'ledger.sqlite');
      const before = statSync(ledger).size;
      for (let round = 0; round < 40; round++) {
        await Promise.all(Array.from({ length: 250 }, () => store.ledger.debit(hashApiKey(key), '/query')));
      }
      await eventually(async () => assert.ok(statSync(ledger).size > before * 4, 'WAL pages reached the database file'));
    } finally {
      await store.close();
      dir.remove();
    }
  });

  it('refuses to delete charge records (append-only)', async () => {
    const dir = tempDir();
    const store = new SqliteStore(dir.path);
    await store.close();
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(join(dir.path, 'ledger.sqlite'));
    try {
      db.prepare(`INSERT INTO accounts (id, name, balance, created_at) VALUES ('acct_k', '', 1, 'now')`).run();
      db.prepare(`INSERT INTO keys (id, account_id, key_hash, name, status, created_at) VALUES ('k', 'acct_k', 'h', '', 'active', 'now')`).run();
      db.prepare(`INSERT INTO charges (key_id, endpoint, at) VALUES ('k', '/query', 'now')`).run();
      assert.throws(() => db.prepare('DELETE FROM charges').run(), /append-only/);
    } finally {
      db.close();
      dir.remove();
    }
  });
});
