import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { spawnServer } from '../support/child-server.js';
import { eventually, tempDir } from '../support/helper.js';
import { startReceiver } from '../support/webhook-receiver.js';

const SECRET = `whsec_${Buffer.alloc(24, 3).toString('base64')}`;

describe('webhooks across a crash', () => {
  it('delivers an event whose debit committed before kill -9, once, after the restart', async () => {
    const dir = tempDir();
    // The endpoint fails until the service has been killed, then answers.
    const receiver = await startReceiver([500]);
    const seed = new SqliteStore(dir.path);
    const { key } = await new KeyAdmin(seed.ledger).create(1, 'crash');
    await seed.close();
    const env = { DATA_DIR: dir.path, WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET };
    try {
      const first = await spawnServer(env);
      const spent = await request(`${first.url}/document`, { headers: { 'x-api-key': key, 'svc-doc-id': 'nothing' } });
      await spent.body.dump();
      assert.equal(spent.headers['x-credits-remaining'], '0');
      // Killed once the failed attempt is recorded: a sender killed during an attempt holds its lease for a minute.
      const watcher = new SqliteStore(dir.path);
      try {
        await eventually(async () => {
          const { deliveries } = await watcher.webhooks.listDeliveries(10, null);
          assert.deepEqual(
            deliveries.map((delivery) => [delivery.type, delivery.attempts.length]),
            [['credits.depleted', 1]],
          );
        });
      } finally {
        await watcher.close();
      }
      first.child.kill('SIGKILL');
      await first.exited;

      receiver.received.length = 0;
      const answered = await startReceiver([200]);
      const restarted = await spawnServer({ ...env, WEBHOOK_URL: answered.url });
      try {
        // The retry is due 5 s after the failed attempt.
        const deadline = Date.now() + 15_000;
        while (!answered.received.some((received) => JSON.parse(received.body).type === 'credits.depleted')) {
          assert.ok(Date.now() < deadline, 'delivered after the restart');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await new Promise((resolve) => setTimeout(resolve, 2500));
        const depleted = answered.received.filter((received) => JSON.parse(received.body).type === 'credits.depleted');
        assert.equal(depleted.length, 1, 'once');
      } finally {
        restarted.child.kill('SIGTERM');
        await restarted.exited;
        await answered.stop();
      }
    } finally {
      await receiver.stop();
      dir.remove();
    }
  });
});
