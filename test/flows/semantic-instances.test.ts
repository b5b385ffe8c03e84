import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { startStandInEmbedder } from '../../src/embeddings/stand-in/stand-in-embedder.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { type ChildServer, spawnServer } from '../support/child-server.js';
import { eventually, tempDir } from '../support/helper.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES } from '../support/pg.js';

const DOCUMENTS = [
  { doc_id: 'auto-recall', title: 'Automobile recall', text: 'The maker recalls vehicles with faulty brakes.', region: 'north' },
  { doc_id: 'truck-fleet', title: 'Truck fleet', text: 'A motorcar and truck garage opens downtown.', region: 'south' },
  { doc_id: 'weather', title: 'Weather report', text: 'Sunny skies then rain over the hills.', region: 'north' },
];

describe('semantic search over two service processes on one PostgreSQL, with the stand-in embedder', { skip: SKIP_POSTGRES }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let standIn: Awaited<ReturnType<typeof startStandInEmbedder>>;
  let servers: ChildServer[] = [];
  let adminToken: string;
  let key: string;
  const dataDir = tempDir();

  const start = () =>
    spawnServer({
      DATABASE_URL: database.url,
      DATA_DIR: dataDir.path,
      REPLICA_POLL_MS: '100',
      EMBEDDINGS_URL: standIn.url,
      EMBEDDINGS_MODEL: 'stand-in',
      EMBEDDINGS_DIMENSIONS: String(standIn.dimensions),
    });

  before(async () => {
    database = await createTestDatabase();
    standIn = await startStandInEmbedder();
    const admin = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
    adminToken = (await new AdminTokens(admin.admin).create('operator', false)).token;
    key = (await new KeyAdmin(admin.ledger, null, Date.now, true).create(100, 'caller')).key;
    await admin.close();
    servers = [await start(), await start()];
  });
  after(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
    await standIn.close();
    await database.drop();
    dataDir.remove();
  });

  const semantic = async (server: ChildServer, text: string) => {
    const response = await request(`${server.url}/query`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: text, mode: 'semantic' }),
    });
    assert.equal(response.statusCode, 200);
    const body = (await response.body.json()) as { resp: { body: { hits: { documents: Array<{ doc_id: string }> } } } };
    return body.resp.body.hits.documents.map((document) => document.doc_id);
  };
  const admin = (server: ChildServer, method: 'POST' | 'DELETE', path: string, body?: string) =>
    request(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body ? { 'content-type': 'application/x-ndjson' } : {}) },
      body,
    });

  it('documents ingested through one instance are found by meaning through the other; a deletion on one leaves the other', async () => {
    const [first, second] = servers;
    const ingested = await admin(first, 'POST', '/admin/documents', DOCUMENTS.map((document) => JSON.stringify(document)).join('\n'));
    assert.equal(ingested.statusCode, 200, await ingested.body.text());
    await eventually(async () => assert.deepEqual((await semantic(second, 'car')).sort(), ['auto-recall', 'truck-fleet']));
    const deleted = await admin(first, 'DELETE', '/admin/documents/auto-recall');
    assert.equal(deleted.statusCode, 200, await deleted.body.text());
    assert.deepEqual(await semantic(first, 'car'), ['truck-fleet']);
    await eventually(async () => assert.deepEqual(await semantic(second, 'car'), ['truck-fleet']));
  });

  it('a restarted instance reads its vector index back and serves the same semantic results', async () => {
    const before = await semantic(servers[1], 'vehicle');
    servers[1].child.kill('SIGTERM');
    await servers[1].exited;
    const kept = readdirSync(dataDir.path, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.usearch'));
    assert.ok(kept.length > 0, 'the stopped instance wrote its vector index beside its replica');
    servers[1] = await start();
    assert.deepEqual(await semantic(servers[1], 'vehicle'), before);
  });
});
