import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { tempDir } from '../support/helper.js';

describe('exact accounting under concurrency, over a real socket', () => {
  const dir = tempDir();
  let server: RunningServer;
  let key: string;
  const agent = new Agent({ connections: 200 });

  before(async () => {
    const seedStore = new SqliteStore(dir.path);
    key = (await new KeyAdmin(seedStore.ledger).create(50, 'burst')).key;
    await seedStore.close();
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
  });
  after(async () => {
    await server.close();
    await agent.close();
    dir.remove();
  });

  it('serves exactly 50 of 200 concurrent billable requests on 50 credits; the rest are 402', async () => {
    const calls = Array.from({ length: 200 }, (_, index) =>
      request(`${server.url}${index % 2 ? '/query' : '/document'}`, {
        dispatcher: agent,
        method: index % 2 ? 'POST' : 'GET',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'svc-doc-id': 'none' },
        body: index % 2 ? JSON.stringify({ query: 'anything' }) : undefined,
      }).then(async (response) => {
        await response.body.dump();
        return { status: response.statusCode, remaining: response.headers['x-credits-remaining'] };
      }),
    );
    const results = await Promise.all(calls);
    const charged = results.filter((result) => result.status === 200 || result.status === 404);
    assert.equal(charged.length, 50);
    assert.equal(results.filter((result) => result.status === 402).length, 150);
    assert.deepEqual(
      charged.map((result) => Number(result.remaining)).sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, index) => index),
      'each charged response reports a distinct balance',
    );
    const credits = await request(`${server.url}/credits`, { dispatcher: agent, headers: { 'x-api-key': key } });
    assert.equal(credits.statusCode, 402);
    assert.equal(((await credits.body.json()) as { current_balance: number }).current_balance, 0);
  });
});
