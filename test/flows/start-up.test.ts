import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { documentsOf, tempDir } from '../support/helper.js';

// 60,000 documents: from 50,000 the index loads on a worker thread, and the service answers meanwhile.
describe('start-up: listening while the search index loads', () => {
  it('answers /healthz and says on /readyz that the index is loading, then is ready when startServer resolves', async () => {
    const dir = tempDir();
    const seed = new SqliteStore(dir.path);
    const words = ['harbour', 'lantern', 'meadow', 'quarry', 'saddle', 'thistle', 'vessel', 'willow'];
    await seed.documents.ingestDocuments(
      documentsOf(
        Array.from({ length: 60_000 }, (_, index) => ({
          docId: `doc-${index}`,
          title: `${words[index % 8]} ${words[(index >> 3) % 8]}`,
          text: `${words[(index >> 6) % 8]} ${words[index % 7]} number ${index}`,
          metadata: {},
        })),
      ),
    );
    await seed.close();
    const answers: Array<Promise<{ path: string; status: number; body: string }>> = [];
    const get = async (url: string, path: string) => {
      const response = await request(`${url}${path}`);
      return { path, status: response.statusCode, body: await response.body.text() };
    };
    let listeningAt: string | undefined;
    const server = await startServer(
      loadConfig({ DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1', SEED_DEMO: 'false', LOG_LEVEL: 'silent', FACE_WORKERS: '0' }),
      {
        onListening: ({ url }) => {
          listeningAt = url;
          answers.push(get(url, '/healthz'), get(url, '/readyz'));
        },
      },
    );
    try {
      assert.equal(listeningAt, server.url, 'told where it listens before it was ready');
      const [health, readiness] = await Promise.all(answers);
      assert.equal(health?.status, 200);
      assert.equal(readiness?.status, 503, readiness?.body);
      assert.match(readiness?.body ?? '', /search index is still loading/);
      assert.equal((await get(server.url, '/readyz')).status, 200, 'ready once startServer has resolved');
    } finally {
      await server.close();
      dir.remove();
    }
  });
});
