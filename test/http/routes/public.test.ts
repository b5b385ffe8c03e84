import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FaceClient } from '../../../src/faces/face-client.js';
import { FaceDownstream } from '../../support/face-downstream.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

describe('free public routes', () => {
  let context: TestContext;
  before(async () => {
    context = await createTestApp();
  });
  after(async () => context.close());

  it('GET / greets and prompts for an endpoint', async () => {
    const response = await context.app.inject({ url: '/' });
    assert.equal(response.statusCode, 200);
    assert.equal(json(response).status, 200);
    assert.match(json(response).message, /endpoint/i);
  });

  it('GET /version reports the configured semantic version', async () => {
    const response = await context.app.inject({ url: '/version', headers: { accept: 'application/json' } });
    assert.deepEqual(json(response), { status: 200, version: '1.3.0' });
  });

  it('GET /profile returns the same static demo profile to everyone, key or not', async () => {
    const anonymous = json(await context.app.inject({ url: '/profile' }));
    const keyed = json(await context.app.inject({ url: '/profile', headers: { 'x-api-key': 'zz' } }));
    assert.deepEqual(anonymous, keyed);
    assert.equal(anonymous.status, 200);
    assert.equal(typeof anonymous.message, 'string');
    assert.equal(typeof anonymous.user.name, 'string');
    assert.ok(Number.isInteger(anonymous.user.age));
  });

  it('free routes cost nothing even when a key is sent', async () => {
    const key = await context.createKey(1);
    for (const url of ['/', '/version', '/profile', '/nettest']) {
      assert.equal((await context.app.inject({ url, headers: { 'x-api-key': key } })).statusCode, 200);
    }
    assert.equal(await context.balanceOf(key), 1);
  });

  it('GET /nettest reports the database latency; an unconfigured face service is null and not a failure', async () => {
    const body = json(await context.app.inject({ url: '/nettest' }));
    assert.equal(body.status, 200);
    assert.equal(body.ok, true);
    assert.equal(typeof body.latency_ms.database, 'number');
    assert.equal(body.latency_ms.face_service, null);
  });
});

describe('GET /nettest with a face service', () => {
  it('measures a live face service without sending it an image, and reports a dead one as null and not ok', async () => {
    const downstream = await new FaceDownstream().start();
    const context = await createTestApp({ face: downstream.client({ timeoutMs: 500 }) });
    try {
      const live = json(await context.app.inject({ url: '/nettest' }));
      assert.equal(live.ok, true);
      assert.equal(typeof live.latency_ms.face_service, 'number');
      assert.equal(downstream.received.length, 0, 'no image (no POST) reached the face service');
      await downstream.stop();
      const dead = json(await context.app.inject({ url: '/nettest' }));
      assert.equal(dead.status, 200);
      assert.equal(dead.ok, false);
      assert.equal(dead.latency_ms.face_service, null);
    } finally {
      await context.close();
      await downstream.stop();
    }
  });
});

describe('GET /healthz and GET /readyz', () => {
  it('answer 200 without a key while the store answers, and /readyz 503 once it does not', async () => {
    const context = await createTestApp();
    try {
      assert.equal((await context.app.inject({ url: '/healthz' })).statusCode, 200);
      assert.equal((await context.app.inject({ url: '/readyz' })).statusCode, 200);
      context.store.ping = async () => {
        throw new Error('gone');
      };
      assertEnvelope(await context.app.inject({ url: '/readyz' }), 503, /store/);
      assert.equal((await context.app.inject({ url: '/healthz' })).statusCode, 200);
    } finally {
      await context.close();
    }
  });
});

describe('while the search index loads after a start', () => {
  it('answers /readyz 503 and /query 503 uncharged, serves /document and /healthz, and all once loaded', async () => {
    const context = await createTestApp();
    let loaded = () => {};
    const gate = new Promise<void>((resolve) => {
      loaded = resolve;
    });
    const { index } = context.store;
    const load = index.prepareSearch.bind(index);
    index.prepareSearch = async () => {
      await gate;
      return load();
    };
    try {
      const key = await context.createKey(5);
      const query = () => context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query: 'breach' } });
      const preparing = context.services.search.prepare();
      assertEnvelope(await context.app.inject({ url: '/readyz' }), 503, /search index is still loading/);
      assert.equal((await context.app.inject({ url: '/healthz' })).statusCode, 200);
      const refused = await query();
      assertEnvelope(refused, 503, /still loading/);
      assert.equal(refused.headers['retry-after'], '2');
      assert.equal(await context.balanceOf(key), 5, 'not charged');
      const documentResponse = await context.app.inject({ url: '/document', headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' } });
      assert.equal(documentResponse.statusCode, 200);

      loaded();
      await preparing;
      assert.equal((await context.app.inject({ url: '/readyz' })).statusCode, 200);
      assert.equal(json(await query()).resp.body.hits.total, 2);
      assert.equal(await context.balanceOf(key), 3);
    } finally {
      await context.close();
    }
  });
});

describe('GET /readyz with a face engine', () => {
  it('answers 503 until the engine has loaded its models, then 200', async () => {
    let loaded = () => {};
    const ready = new Promise<void>((resolve) => {
      loaded = resolve;
    });
    const downstream = await new FaceDownstream().start();
    const face = new FaceClient({ url: downstream.url, timeoutMs: 1000, breakerFailures: 3, breakerCooldownMs: 1000 });
    const loading = Object.assign(Object.create(face) as FaceClient, { ready });
    const context = await createTestApp({ face: loading });
    try {
      assertEnvelope(await context.app.inject({ url: '/readyz' }), 503, /face engine/);
      loaded();
      await ready;
      assert.equal((await context.app.inject({ url: '/readyz' })).statusCode, 200);
    } finally {
      await context.close();
      await downstream.stop();
    }
  });
});
