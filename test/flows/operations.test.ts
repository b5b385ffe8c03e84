import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { spawnServer } from '../support/child-server.js';
import { FaceDownstream } from '../support/face-downstream.js';
import { pngLikeImage, tempDir } from '../support/helper.js';

describe('operations of a running service', () => {
  const dir = tempDir();
  let downstream: FaceDownstream;
  let key: string;
  before(async () => {
    downstream = await new FaceDownstream().start();
    const store = new SqliteStore(dir.path);
    key = (await new KeyAdmin(store.ledger).create(20, 'ops')).key;
    await store.close();
  });
  after(async () => {
    await downstream.stop();
    dir.remove();
  });

  it('on SIGTERM finishes in-flight requests, then exits 0; logs carry request ids but never keys or images', async () => {
    const server = await spawnServer({
      DATA_DIR: dir.path,
      LOG_LEVEL: 'debug',
      FACE_SERVICE_URL: downstream.url,
      FACE_SERVICE_TIMEOUT_MS: '1500',
    });
    const image = pngLikeImage('a distinctive image payload that must never be logged').toString('base64');
    const call = (path: string, body?: unknown) =>
      request(`${server.url}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'svc-doc-id': 'x' },
        body: body ? JSON.stringify(body) : undefined,
      });
    await (await call('/document')).body.dump();
    await (await call('/query', { query: 'find me' })).body.dump();

    downstream.behaviour = { kind: 'hang' };
    const inFlight = call('/face/search', { image_b64: image });
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.child.kill('SIGTERM');
    const response = await inFlight;
    assert.equal(response.statusCode, 502, 'the in-flight request got its answer (downstream timeout)');
    await response.body.dump();
    assert.equal(await server.exited, 0);

    const logs = server.output();
    assert.ok(!logs.includes(key), 'API key not in logs');
    assert.ok(!logs.includes(key.toUpperCase()));
    assert.ok(!logs.includes(image.slice(0, 40)), 'image data not in logs');
    const lines = logs.split('\n').filter((line) => line.startsWith('{'));
    assert.ok(
      lines.some((line) => JSON.parse(line).reqId),
      'log lines carry the request id',
    );

    const store = new SqliteStore(dir.path);
    assert.equal((await new KeyAdmin(store.ledger, null, Date.now, true).find(key))!.balance, 17);
    await store.close();
  });
});
