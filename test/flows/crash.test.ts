import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { auditLedger } from '../../src/cli/commands/audit.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { spawnServer } from '../support/child-server.js';
import { tempDir } from '../support/helper.js';

describe('crash safety', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('after kill -9 in a burst, balance = starting balance - recorded charges, and every 200 was recorded', async () => {
    const STARTING = 5000;
    const seed = new SqliteStore(dir.path);
    const created = await new KeyAdmin(seed.ledger).create(STARTING, 'crash');
    await seed.close();

    const server = await spawnServer({ DATA_DIR: dir.path });
    const agent = new Agent({ connections: 64 });
    let served = 0;
    let stop = false;
    const worker = async () => {
      while (!stop) {
        try {
          const response = await request(`${server.url}/query`, {
            dispatcher: agent,
            method: 'POST',
            headers: { 'x-api-key': created.key, 'content-type': 'application/json' },
            body: '{"query":"crash test"}',
          });
          await response.body.dump();
          if (response.statusCode === 200) served++;
        } catch {
          return;
        }
      }
    };
    const workers = Array.from({ length: 64 }, worker);
    while (served < 300) await new Promise((resolve) => setTimeout(resolve, 5));
    server.child.kill('SIGKILL');
    await server.exited;
    stop = true;
    await Promise.all(workers);
    await agent.close();

    const store = new SqliteStore(dir.path);
    try {
      const key = (await store.ledger.findKeyById(created.record.id))!;
      const charges = await store.ledger.countCharges(key.id);
      assert.equal(key.balance + charges, STARTING, `balance ${key.balance} + charges ${charges}`);
      assert.ok(charges >= served, `every served request was recorded (${served} served, ${charges} recorded)`);
      assert.equal((await auditLedger(store)).consistent, true, 'metered-search audit finds the ledger consistent');
    } finally {
      await store.close();
    }

    const restarted = await spawnServer({ DATA_DIR: dir.path });
    try {
      const response = await request(`${restarted.url}/credits`, { headers: { 'x-api-key': created.key } });
      const body = (await response.body.json()) as { current_balance: number };
      const check = new SqliteStore(dir.path);
      assert.equal(body.current_balance, STARTING - (await check.ledger.countCharges(created.record.id)));
      await check.close();
    } finally {
      restarted.child.kill('SIGTERM');
      await restarted.exited;
    }
  });
});
