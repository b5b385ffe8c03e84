import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { type ChildServer, spawnServer } from '../support/child-server.js';
import { FaceDownstream } from '../support/face-downstream.js';
import { eventually, pngLikeImage, tempDir } from '../support/helper.js';

/** Every line the service logs at its most verbose level, over a run that touches every endpoint and error path. */
describe('logs hold no secrets', () => {
  const dir = tempDir();
  const downstream = new FaceDownstream();
  let server: ChildServer;
  let key = '';
  const image = pngLikeImage(randomBytes(3000)).toString('base64');

  before(async () => {
    await downstream.start();
    const seed = new SqliteStore(dir.path);
    key = (await new KeyAdmin(seed.ledger).create(1000, 'logs')).key;
    await seed.close();
    server = await spawnServer({ DATA_DIR: dir.path, LOG_LEVEL: 'trace', FACE_SERVICE_URL: downstream.url, SEED_DEMO: 'true' });
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    await downstream.stop();
    dir.remove();
  });

  const call = async (method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await request(`${server.url}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    await response.body.dump();
    return response.statusCode;
  };

  it('never logs an API key, a near-miss key, a portal link token or image data, on success or failure', async () => {
    const nearMiss = `${key.slice(0, 63)}${key[63] === '0' ? '1' : '0'}`;
    const statuses: number[] = [];
    for (const apiKey of [key, key.toUpperCase(), nearMiss, 'not-a-key']) {
      statuses.push(await call('GET', '/credits', { 'x-api-key': apiKey }));
      statuses.push(await call('POST', '/query', { 'x-api-key': apiKey }, { query: 'contract law' }));
      statuses.push(await call('GET', '/document', { 'x-api-key': apiKey, 'svc-doc-id': 'nope' }));
      statuses.push(await call('POST', '/face/search', { 'x-api-key': apiKey }, { image_b64: image }));
    }
    downstream.behaviour = { kind: 'status', status: 500, body: JSON.stringify({ error: 'bad image', echo: image }) };
    statuses.push(await call('POST', '/face/search', { 'x-api-key': key }, { image_b64: image }));
    downstream.behaviour = { kind: 'status', status: 200, body: `{"matches": "${image}"`, contentType: 'application/json' };
    statuses.push(await call('POST', '/face/search', { 'x-api-key': key }, { image_b64: image }));
    downstream.behaviour = { kind: 'destroy' };
    statuses.push(await call('POST', '/face/search', { 'x-api-key': key }, { image_b64: image }));
    statuses.push(await call('POST', '/face/search', { 'x-api-key': key }, { image_b64: `${image}!!` }));
    statuses.push(await call('POST', '/face/search', { 'x-api-key': key }, `{"image_b64": "${image}"`));
    statuses.push(await call('POST', '/query', { 'x-api-key': key }, `{"query": "${key}"`));
    statuses.push(await call('GET', `/nonexistent/${key}`, { 'x-api-key': key }));
    const linkToken = randomBytes(32).toString('base64url');
    statuses.push(await call('GET', `/portal/sign-in?token=${linkToken}`, {}));

    assert.ok(statuses.includes(200) && statuses.includes(401) && statuses.includes(400) && statuses.includes(502), `${statuses}`);
    // Log lines reach the pipe after the responses: wait until every request's completion is in.
    const requests = statuses.length;
    await eventually(async () => assert.ok((server.output().match(/request completed/g) ?? []).length >= requests));
    const logs = server.output();
    assert.ok(logs.split('\n').length > 40, 'the run was logged at trace level');
    for (const secret of [key, key.toUpperCase(), nearMiss]) {
      assert.ok(!logs.toLowerCase().includes(secret.toLowerCase()), 'an API key appears in the logs');
      assert.ok(!logs.toLowerCase().includes(secret.slice(8, 40).toLowerCase()), 'part of an API key appears in the logs');
    }
    assert.ok(!logs.includes(linkToken.slice(0, 20)), 'a portal link token appears in the logs');
    assert.match(logs, /\/portal\/sign-in\?token=\[redacted\]/);
    for (let offset = 0; offset < image.length - 32; offset += 500) {
      assert.ok(!logs.includes(image.slice(offset, offset + 32)), `image data (offset ${offset}) appears in the logs`);
    }
  });
});
