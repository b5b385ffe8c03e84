import assert from 'node:assert/strict';
import { type AddressInfo, createServer } from 'node:net';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { loadConfig } from '../../src/config.js';
import { startStandInEmbedder } from '../../src/embeddings/stand-in/stand-in-embedder.js';
import { startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { spawnServer } from '../support/child-server.js';
import { documentsOf, eventually, tempDir } from '../support/helper.js';

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

describe('start-up: the embedding model is probed', () => {
  const probeWarning = /the embedding model failed a start-up probe/;
  const serveWith = async (url: string, dimensions: number) => {
    const dir = tempDir();
    const server = await spawnServer({
      DATA_DIR: dir.path,
      EMBEDDINGS_URL: url,
      EMBEDDINGS_MODEL: 'stand-in',
      EMBEDDINGS_DIMENSIONS: String(dimensions),
    });
    return {
      server,
      stop: async () => {
        server.child.kill('SIGTERM');
        await server.exited;
        dir.remove();
      },
    };
  };

  it('warns, naming the endpoint, when the model is unreachable or answers the wrong length; and starts all the same', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const unreachable = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1/embeddings`;
    await new Promise((resolve) => closed.close(resolve));
    const standIn = await startStandInEmbedder({ dimensions: 64 });
    const down = await serveWith(unreachable, 64);
    const wrongLength = await serveWith(standIn.url, 32);
    const right = await serveWith(standIn.url, 64);
    try {
      await eventually(async () => assert.match(down.server.output(), probeWarning), 15_000);
      assert.ok(down.server.output().includes(unreachable), down.server.output());
      await eventually(async () => assert.match(wrongLength.server.output(), /vectors of 64 dimensions .*EMBEDDINGS_DIMENSIONS is 32/), 15_000);
      for (const { server } of [down, wrongLength, right]) assert.equal((await request(`${server.url}/readyz`)).statusCode, 200);
      assert.doesNotMatch(right.server.output(), probeWarning);
    } finally {
      await Promise.all([down.stop(), wrongLength.stop(), right.stop()]);
      await standIn.close();
    }
  });
});
