import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DocumentEmbeddings } from '../../src/embeddings/document-embeddings.js';
import { OpenAiEmbedder } from '../../src/embeddings/openai-embedder.js';
import { startStandInEmbedder } from '../../src/embeddings/stand-in/stand-in-embedder.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { cli, cliOn } from '../support/cli-helper.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { createTestApp, json, standInEmbeddings, tempDir } from '../support/helper.js';

const LINES = [
  { doc_id: 'auto-recall', title: 'Automobile recall', text: 'The maker recalls vehicles.' },
  { doc_id: 'privacy', title: 'Personal data rules', text: 'Confidential records.' },
  { doc_id: 'weather', title: 'Weather report', text: 'Sunny skies.' },
];

describe('metered-search embed --missing, and ingest with an embedder', () => {
  const dir = tempDir();
  const file = join(dir.path, 'documents.jsonl');
  let standIn: Awaited<ReturnType<typeof startStandInEmbedder>>;
  let proxy: FaultProxy;
  let env: Record<string, string>;
  let embedderEnv: Record<string, string>;

  before(async () => {
    standIn = await startStandInEmbedder();
    proxy = await new FaultProxy(standIn.url.replace('/v1/embeddings', '')).start();
    writeFileSync(file, LINES.map((line) => JSON.stringify(line)).join('\n'));
    env = { DATA_DIR: join(dir.path, 'data') };
    embedderEnv = {
      ...env,
      EMBEDDINGS_URL: `${proxy.url}/v1/embeddings`,
      EMBEDDINGS_MODEL: 'stand-in',
      EMBEDDINGS_DIMENSIONS: String(standIn.dimensions),
      EMBEDDINGS_RETRIES: '0',
    };
  });
  after(async () => {
    await proxy.stop();
    await standIn.close();
    dir.remove();
  });

  it('refuses without an embedding model, saying what to set', async () => {
    assert.equal((await cli(env, 'ingest', file)).code, 0);
    const result = await cli(env, 'embed', '--missing');
    assert.equal(result.code, 1);
    assert.match(result.stderr, /No embedding model is configured: set EMBEDDINGS_URL, EMBEDDINGS_MODEL and EMBEDDINGS_DIMENSIONS/);
  });

  it('embeds what was ingested before the model was set, once, with a progress bar; then semantic search finds it', async () => {
    const result = await cliOn({ interactive: true }, embedderEnv, 'embed', '--missing');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /\[#{30}\] 3\/3 documents, 3 embedded/);
    assert.match(result.stdout, /Embedded 3 of 3 documents with stand-in/);
    const calls = proxy.seen.length;
    const again = JSON.parse((await cli(embedderEnv, 'embed', '--missing', '--json')).stdout);
    assert.deepEqual(again, { scanned: 3, total: 3, embedded: 0 });
    assert.equal(proxy.seen.length, calls, 'nothing left to embed: no call');

    const embeddings = new DocumentEmbeddings(new OpenAiEmbedder(standInEmbeddings(`${proxy.url}/v1/embeddings`, standIn.dimensions)), 2000);
    const context = await createTestApp({
      store: new SqliteStore(env.DATA_DIR, { embeddings }),
      documents: [],
      embeddings: standInEmbeddings(`${proxy.url}/v1/embeddings`, standIn.dimensions),
    });
    try {
      const key = await context.createKey(5);
      const response = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key },
        payload: { query: 'car', mode: 'semantic' },
      });
      assert.deepEqual(
        json(response).resp.body.hits.documents.map((document: { doc_id: string }) => document.doc_id),
        ['auto-recall'],
      );
    } finally {
      await context.close();
    }
  });

  it('a changed model re-embeds every document', async () => {
    const result = JSON.parse((await cli({ ...embedderEnv, EMBEDDINGS_MODEL: 'stand-in-2' }, 'embed', '--missing', '--json')).stdout);
    assert.equal(result.embedded, 3);
  });

  it('an ingest whose embedding fails writes nothing and says why', async () => {
    const other = join(dir.path, 'more.jsonl');
    writeFileSync(other, JSON.stringify({ doc_id: 'lorry', title: 'Lorry', text: 'A new lorry' }));
    proxy.faults.push({ kind: 'answer', status: 503, body: '' });
    const result = await cli(embedderEnv, 'ingest', other);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /the embeddings endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings answered 503 \(after 1 attempt\)/);
    assert.match(result.stderr, /were not written/);
    const count = JSON.parse((await cli(embedderEnv, 'embed', '--missing', '--json')).stdout);
    assert.equal(count.scanned, 3, 'the lorry was not written');
  });
});
