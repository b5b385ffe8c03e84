import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { auditLedger } from '../../src/cli/commands/audit.js';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { tempDir } from '../support/helper.js';

describe('a running service expires grants by itself', () => {
  it('takes what is left of a grant from the balance within a second or two of its expiry', async () => {
    const dir = tempDir();
    const seed = new SqliteStore(dir.path);
    const admin = new KeyAdmin(seed.ledger);
    const { key, record } = await admin.create(3, 'expiring');
    // Far enough ahead that a start on a loaded machine still sees the grant before its time.
    const expiresAt = new Date(Date.now() + 4000).toISOString();
    await admin.topUp(record.id, 20, { expiresAt });
    await seed.close();
    const server = await startServer(
      loadConfig({ DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1', SEED_DEMO: 'false', LOG_LEVEL: 'silent', FACE_WORKERS: '0' }),
    );
    try {
      const balance = async () => {
        const response = await request(`${server.url}/credits`, { headers: { 'x-api-key': key } });
        return ((await response.body.json()) as { current_balance: number }).current_balance;
      };
      assert.equal(await balance(), 23);
      while ((await balance()) !== 3) {
        assert.ok(Date.now() < Date.parse(expiresAt) + 3000, 'expired within 3 s of its time');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await server.close();
    }
    const store = new SqliteStore(dir.path);
    try {
      const report = await auditLedger(store);
      assert.equal(report.consistent, true);
      assert.deepEqual(
        (await store.ledger.auditLedger()).map((ledger) => [ledger.granted, ledger.expired, ledger.balance]),
        [[23, 20, 3]],
      );
    } finally {
      await store.close();
      dir.remove();
    }
  });
});
