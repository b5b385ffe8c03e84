import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { assertEnvelope, createTestApp, json, type TestContext, tempDir } from './support/helper.js';

describe('the app: envelopes, methods, ids, limits, docs', () => {
  let context: TestContext;
  before(async () => {
    context = await createTestApp({ settings: { bodyLimitBytes: 2048 } });
  });
  after(async () => context.close());

  it('answers an unknown path with a 404 envelope', async () => {
    assertEnvelope(await context.app.inject({ url: '/nothing/here' }), 404);
    assertEnvelope(await context.app.inject({ method: 'POST', url: '/nothing' }), 404);
  });

  it('answers a known path with the wrong method with 405 and an Allow header', async () => {
    for (const [method, url, allow] of [
      ['POST', '/credits', 'GET'],
      ['GET', '/query', 'POST'],
      ['DELETE', '/document', 'GET'],
      ['PUT', '/face/search', 'POST'],
      ['POST', '/', 'GET'],
    ] as const) {
      const response = await context.app.inject({ method, url });
      assertEnvelope(response, 405);
      assert.match(String(response.headers.allow), new RegExp(allow));
    }
  });

  it('answers HEAD and OPTIONS on billable routes with 405 and Allow, uncharged, even with an Idempotency-Key', async () => {
    const key = await context.createKey(3);
    for (const method of ['HEAD', 'OPTIONS'] as const) {
      for (const [url, allow] of [
        ['/document', 'GET'],
        ['/query', 'POST'],
        ['/face/search', 'POST'],
      ] as const) {
        const response = await context.app.inject({
          method,
          url,
          headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17', 'idempotency-key': `${method}-${url}` },
        });
        assert.equal(response.statusCode, 405, `${method} ${url}`);
        assert.equal(response.headers.allow, allow);
      }
    }
    assert.equal(await context.balanceOf(key), 3);
    assert.equal(
      (await context.app.inject({ method: 'HEAD', url: '/credits', headers: { 'x-api-key': key } })).statusCode,
      200,
      'free routes keep HEAD',
    );
  });

  it('answers a wrong method with 405 whatever its body: empty JSON, bad JSON', async () => {
    for (const payload of [undefined, '{bad']) {
      const response = await context.app.inject({ method: 'DELETE', url: '/credits', headers: { 'content-type': 'application/json' }, payload });
      assertEnvelope(response, 405);
      assert.equal(response.headers.allow, 'GET, HEAD');
    }
    assertEnvelope(await context.app.inject({ method: 'POST', url: '/nowhere', headers: { 'content-type': 'application/json' }, payload: '' }), 404);
  });

  it('accepts valid JSON holding __proto__ or constructor.prototype keys, ignoring them', async () => {
    const key = await context.createKey(3);
    for (const payload of ['{"query":"breach","__proto__":{"top_k":"x"}}', '{"query":"breach","constructor":{"prototype":{"polluted":true}}}']) {
      const response = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload,
      });
      assert.equal(response.statusCode, 200, response.body);
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('answers a body nested more than 64 levels deep with 400, before authenticating or charging', async () => {
    const key = await context.createKey(3);
    const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const send = (extra: string) =>
      context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: `{"query":"breach","x":${extra}}`,
      });
    assert.equal((await send(nested(63))).statusCode, 200, '64 levels in all');
    assertEnvelope(await send(nested(64)), 400, /64 levels/);
    assertEnvelope(await send(nested(1000)), 400, /64 levels/);
    assert.equal(await context.balanceOf(key), 2);
  });

  it('sends a unique x-request-id on every response, errors included', async () => {
    const ids = new Set<string>();
    for (const url of ['/', '/credits', '/nothing', '/version']) {
      const id = (await context.app.inject({ url })).headers['x-request-id'];
      assert.equal(typeof id, 'string');
      ids.add(id as string);
    }
    assert.equal(ids.size, 4);
  });

  it('does not take a caller-chosen request id', async () => {
    const response = await context.app.inject({ url: '/', headers: { 'x-request-id': 'forged' } });
    assert.notEqual(response.headers['x-request-id'], 'forged');
  });

  it('answers a body over BODY_LIMIT_BYTES with a 413 envelope, uncharged', async () => {
    const key = await context.createKey(2);
    const response = await context.app.inject({
      method: 'POST',
      url: '/query',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: JSON.stringify({ query: 'x'.repeat(4096) }),
    });
    assertEnvelope(response, 413, /2048/);
    assert.equal(await context.balanceOf(key), 2);
  });

  it('serves an OpenAPI 3.1 document generated from the route schemas', async () => {
    const document = json(await context.app.inject({ url: '/openapi.json' }));
    assert.equal(document.openapi, '3.1.0');
    for (const path of ['/', '/version', '/profile', '/credits', '/document', '/query', '/face/search', '/nettest']) {
      assert.ok(document.paths[path], `${path} is documented`);
    }
    const query = document.paths['/query'].post;
    assert.ok(query.requestBody.content['application/json'].schema.properties.top_k);
    assert.ok(query.responses['402']);
    assert.deepEqual(document.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'x-api-key' });
  });

  it('serves interactive documentation at /docs', async () => {
    const response = await context.app.inject({ url: '/docs/' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /text\/html/);
    assert.match(response.body, /openapi\.json/);
    const script = await context.app.inject({ url: '/docs/js/scalar.js' });
    assert.equal(script.statusCode, 200);
  });
});

describe('unexpected faults', () => {
  it('answer a 500 envelope with the request id; a charge already made stays recorded', async () => {
    const dir = tempDir();
    const store = new SqliteStore(dir.path);
    store.documents.getDocumentJson = async () => {
      throw new Error('disk on fire');
    };
    const context = await createTestApp({ store });
    try {
      const key = await context.createKey(3);
      const response = await context.app.inject({ url: '/document', headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' } });
      const body = assertEnvelope(response, 500);
      assert.ok(body.message.includes(String(response.headers['x-request-id'])));
      assert.ok(!response.body.includes('disk on fire'), 'no internals leak');
      assert.equal(response.headers['x-credits-remaining'], '2');
      assert.equal(await context.balanceOf(key), 2);
    } finally {
      await context.close();
      dir.remove();
    }
  });

  it('answer 503 with Retry-After when the store stays locked by another writer', async () => {
    const dir = tempDir();
    const store = new SqliteStore(dir.path);
    store.documents.getDocumentJson = async () => {
      throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    };
    const context = await createTestApp({ store });
    try {
      const key = await context.createKey(3);
      const response = await context.app.inject({ url: '/document', headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' } });
      assertEnvelope(response, 503, /retry/i);
      assert.equal(response.headers['retry-after'], '1');
    } finally {
      await context.close();
      dir.remove();
    }
  });
});
