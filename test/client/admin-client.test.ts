import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { MeteredSearchAdmin, MeteredSearchClient, type MeteredSearchError, MeteredSearchNetworkError } from '../../src/client/index.js';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { tempDir } from '../support/helper.js';

const FAST_RETRY = { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 2000 };

describe('the typed admin client (MeteredSearchAdmin)', () => {
  const dir = tempDir();
  let server: RunningServer;
  let proxy: FaultProxy;
  let admin: MeteredSearchAdmin;

  before(async () => {
    const seed = new SqliteStore(dir.path);
    const token = (await new AdminTokens(seed.admin).create('billing', false)).token;
    await seed.close();
    server = await startServer(
      loadConfig({
        DATA_DIR: dir.path,
        PORT: '0',
        HOST: '127.0.0.1',
        SEED_DEMO: 'false',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PER_S: '0',
        FACE_WORKERS: '0',
      }),
    );
    proxy = await new FaultProxy(server.url).start();
    admin = new MeteredSearchAdmin({ baseUrl: proxy.url, token, retry: FAST_RETRY });
  });
  after(async () => {
    await proxy.stop();
    await server.close();
    dir.remove();
  });

  it('creates a key that works with the public client, lists it and shows it', async () => {
    const created = await admin.createKey({ credits: 3, name: 'acme' });
    assert.match(created.key, /^[0-9a-f]{64}$/);
    const caller = new MeteredSearchClient({ baseUrl: server.url, apiKey: created.key });
    assert.equal((await caller.credits()).current_balance, 3);
    assert.ok((await admin.listKeys({ name: 'acme' })).keys.some((key) => key.id === created.id));
    assert.equal((await admin.getKey(created.id)).balance, 3);
  });

  it('retries a top-up whose answer was lost, granting once', async () => {
    const created = await admin.createKey({ credits: 1 });
    proxy.faults.push({ kind: 'drop-response' }, { kind: 'drop-response' });
    const topped = await admin.topUp(created.id, { credits: 10, reference: 'inv-7' });
    assert.equal(topped.balance, 11);
    assert.equal(topped.meta.attempts, 3);
    assert.equal(topped.meta.replayed, true);
    assert.equal((await admin.getKey(created.id)).balance, 11);
  });

  it('retries a roll and a refill plan whose answers were lost: one roll, one refill, the same new key', async () => {
    const created = await admin.createKey({ credits: 1 });
    proxy.faults.push({ kind: 'drop-response' }, { kind: 'drop-response' });
    const refill = await admin.setRefill(created.id, { credits: 5, interval: 'day', mode: 'add' });
    assert.deepEqual([refill.balance, refill.granted, refill.meta.attempts, refill.meta.replayed], [6, 5, 3, true]);
    proxy.faults.push({ kind: 'drop-response' });
    const rolled = await admin.roll(created.id, 0);
    assert.equal(rolled.meta.replayed, true);
    const caller = new MeteredSearchClient({ baseUrl: server.url, apiKey: rolled.key });
    assert.equal((await caller.credits()).current_balance, 6, 'the key in the replayed answer is the key');
    const log = await admin.auditLog({ limit: 20 });
    const mine = log.entries.filter((entry) => entry.target === created.id).map((entry) => entry.action);
    assert.deepEqual(mine.sort(), ['keys.create', 'keys.refill', 'keys.roll']);
  });

  it('tries a key creation once, so a lost answer never creates two keys', async () => {
    const before = (await admin.listKeys({ name: 'once' })).keys.length;
    proxy.faults.push({ kind: 'drop-response' });
    await assert.rejects(admin.createKey({ credits: 1, name: 'once' }), MeteredSearchNetworkError);
    assert.equal((await admin.listKeys({ name: 'once' })).keys.length, before + 1);
  });

  it('changes status and rate, reads usage and the audit log, and throws the envelope on a refusal', async () => {
    const created = await admin.createKey({ credits: 2 });
    assert.equal((await admin.setStatus(created.id, 'disable')).status, 'disabled');
    assert.equal((await admin.setRate(created.id, 5)).rate, 5);
    assert.equal((await admin.keyUsage(created.id, { bucket: 'hour' })).totals.count, 0);
    assert.ok((await admin.usage()).totals.count >= 0);
    assert.equal((await admin.auditLog({ limit: 1 })).entries[0].action, 'keys.rate');
    assert.deepEqual((await admin.updateKey(created.id, { prices: { '/query': 2 } })).prices, { '/query': 2 });
    const refill = await admin.setRefill(created.id, { credits: 5, interval: 'day', mode: 'add' });
    assert.deepEqual([refill.balance, refill.refill?.credits], [7, 5]);
    assert.equal((await admin.setRefill(created.id, null)).refill, null);
    const endpoint = await admin.createWebhook({ url: 'http://127.0.0.1:9/hooks', events: ['key.revoked'] });
    assert.match(endpoint.secret, /^whsec_/);
    assert.ok((await admin.listWebhooks()).webhooks.some((webhook) => webhook.id === endpoint.id));
    assert.deepEqual({ ...(await admin.webhookDeliveries({ limit: 5 })) }.next_cursor, null);
    assert.deepEqual({ ...(await admin.deleteWebhook(endpoint.id)) }, { deleted: endpoint.id });
    await assert.rejects(admin.retryWebhookDelivery('whd_nope'), (error: MeteredSearchError) => error.status === 404);
    const rolled = await admin.roll(created.id, 60);
    assert.deepEqual([rolled.id, rolled.key.length, typeof rolled.old_key_valid_until], [created.id, 64, 'string']);
    await admin.setStatus(created.id, 'revoke');
    await assert.rejects(admin.topUp(created.id, { credits: 1 }), (error: MeteredSearchError) => error.status === 409);
    assert.deepEqual({ ...(await admin.ingestDocuments([{ doc_id: 'seal', text: 'Seals bask.' }])) }, { ingested: 1 });
    assert.deepEqual({ ...(await admin.deleteDocument('seal')) }, { deleted: 'seal' });
  });
});
