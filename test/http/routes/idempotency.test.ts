import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashApiKey } from '../../../src/billing/keys.js';
import { IdempotencyService } from '../../../src/idempotency/idempotency-service.js';
import { SqliteStore } from '../../../src/store/sqlite-store.js';
import { FaceDownstream } from '../../support/face-downstream.js';
import { assertEnvelope, createTestApp, json, pngLikeImage, type TestContext, tempDir } from '../../support/helper.js';

const IMAGE = pngLikeImage('image bytes for the idempotency tests').toString('base64');

describe('Idempotency-Key on billable routes', () => {
  let downstream: FaceDownstream;
  let context: TestContext;
  before(async () => {
    downstream = await new FaceDownstream().start();
    context = await createTestApp({ face: downstream.client({ timeoutMs: 300 }), idempotency: { lockMs: 2000 } });
  });
  after(async () => {
    await context.close();
    await downstream.stop();
  });

  const query = (key: string, idempotencyKey: string | undefined, body: unknown = { query: 'personal data breach' }) =>
    context.app.inject({
      method: 'POST',
      url: '/query',
      headers: {
        'x-api-key': key,
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const document = (key: string, idempotencyKey: string, docId: string) =>
    context.app.inject({ method: 'GET', url: '/document', headers: { 'x-api-key': key, 'svc-doc-id': docId, 'idempotency-key': idempotencyKey } });
  const face = (key: string, idempotencyKey: string) =>
    context.app.inject({
      method: 'POST',
      url: '/face/search',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      payload: JSON.stringify({ image_b64: IMAGE }),
    });

  describe('happy', () => {
    it('runs and charges the first request; a repeat replays status, body and x-credits-remaining for free', async () => {
      const key = await context.createKey(5);
      const first = await query(key, 'order-1');
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['x-credits-remaining'], '4');
      assert.equal(first.headers['idempotent-replayed'], undefined);
      assert.equal(await context.balanceOf(key), 4);

      for (let repeat = 0; repeat < 3; repeat++) {
        const again = await query(key, 'order-1');
        assert.equal(again.statusCode, 200);
        assert.equal(again.body, first.body);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        assert.equal(again.headers['x-credits-remaining'], '4');
        assert.match(String(again.headers['content-type']), /^application\/json/);
      }
      assert.equal(await context.balanceOf(key), 4, 'repeats cost nothing');
      assert.equal((await query(key, 'order-2')).headers['x-credits-remaining'], '3', 'a new key is a new request');
      assert.equal((await query(key, undefined)).headers['x-credits-remaining'], '2', 'without the header every request is charged');
    });

    it('replays a charged non-200 answer too (a 404 document), on /document', async () => {
      const key = await context.createKey(5);
      const first = await document(key, 'doc-1', 'no-such-doc');
      assertEnvelope(first, 404);
      const again = await document(key, 'doc-1', 'no-such-doc');
      assert.equal(again.statusCode, 404);
      assert.equal(again.body, first.body);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(await context.balanceOf(key), 4);
      assert.equal((await document(key, 'doc-2', 'gdpr-33')).statusCode, 200);
    });

    it('replays a face search without calling the downstream again', async () => {
      const key = await context.createKey(5);
      downstream.behaviour = { kind: 'matches', matches: [{ doc_id: 'p1', confidence: 0.9 }] };
      const calls = downstream.received.length;
      const first = await face(key, 'face-1');
      assert.equal(first.statusCode, 200);
      const again = await face(key, 'face-1');
      assert.equal(again.body, first.body);
      assert.equal(downstream.received.length, calls + 1, 'the downstream saw one search');
      assert.equal(await context.balanceOf(key), 4);
    });

    it("keeps each caller's keys apart: the same Idempotency-Key of another API key runs and charges", async () => {
      const a = await context.createKey(5);
      const b = await context.createKey(5);
      await query(a, 'shared-name');
      const other = await query(b, 'shared-name');
      assert.equal(other.headers['idempotent-replayed'], undefined);
      assert.equal(await context.balanceOf(b), 4);
    });
  });

  describe('errors', () => {
    it('answers 422 to the same key with another body, path or document id, uncharged', async () => {
      const key = await context.createKey(5);
      await query(key, 'reuse');
      assertEnvelope(await query(key, 'reuse', { query: 'something else' }), 422, /different request/);
      assertEnvelope(await document(key, 'reuse', 'gdpr-33'), 422, /Idempotency-Key/);
      await document(key, 'doc-a', 'gdpr-33');
      assertEnvelope(await document(key, 'doc-a', 'gdpr-32'), 422);
      assert.equal(await context.balanceOf(key), 3);
    });

    it('answers 400 to a malformed Idempotency-Key, uncharged', async () => {
      const key = await context.createKey(5);
      for (const bad of ['', 'has space', 'x'.repeat(256), 'ümlaut', 'tab\there']) {
        assertEnvelope(await query(key, bad), 400, /Idempotency-Key/);
      }
      const twice = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': ['one', 'two'] },
        payload: JSON.stringify({ query: 'x' }),
      });
      assertEnvelope(twice, 400, /sent once/);
      assert.equal(await context.balanceOf(key), 5);
      assert.equal((await query(key, 'x'.repeat(255))).statusCode, 200, '255 visible characters are fine');
      assert.equal((await query(key, '!~"#{}')).statusCode, 200);
    });

    it('answers 409 while the first request with the key is still running, then replays its answer', async () => {
      const key = await context.createKey(5);
      downstream.behaviour = { kind: 'hang' };
      const first = face(key, 'slow-1');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const concurrent = await face(key, 'slow-1');
      assertEnvelope(concurrent, 409, /still running/);
      assert.equal(concurrent.headers['retry-after'], '1');
      const finished = await first;
      assert.equal(finished.statusCode, 502, 'the downstream timed out after the charge');
      const replay = await face(key, 'slow-1');
      assert.equal(replay.statusCode, 502);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(await context.balanceOf(key), 4, 'one charge for the three attempts');
    });
  });

  describe('what is not stored', () => {
    it('does not keep a request refused before its debit: 402, 401 and 400 can be retried with the same key', async () => {
      const key = await context.createKey(0);
      assertEnvelope(await query(key, 'pay-later'), 402);
      await context.store.ledger.topUp((await context.store.ledger.findKeyByHash(hashApiKey(key)))!.id, 2);
      const paid = await query(key, 'pay-later');
      assert.equal(paid.statusCode, 200);
      assert.equal(paid.headers['idempotent-replayed'], undefined);

      assertEnvelope(await query(key, 'fix-body', { top_k: 'five' }), 400);
      assert.equal((await query(key, 'fix-body', { query: 'valid now' })).statusCode, 200, 'a 400 left nothing behind');

      const unknown = 'c'.repeat(64);
      assertEnvelope(await query(unknown, 'who'), 401);
      assert.equal(await context.balanceOf(key), 0);
    });
  });

  describe('security', () => {
    it('refuses a revoked key even for a replay', async () => {
      const key = await context.createKey(5);
      await query(key, 'before-revoke');
      const record = (await context.store.ledger.findKeyByHash(hashApiKey(key)))!;
      await context.store.ledger.setKeyStatus(record.id, 'revoked');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      assertEnvelope(await query(key, 'before-revoke'), 403);
    });
  });
});

describe('Idempotency-Key across a crash and expiry', () => {
  it('a retry after an attempt that paid and died runs again without paying twice', async () => {
    // The lock outlasts the steps before the retry held by it, however slow the machine.
    const lockMs = 1500;
    const context = await createTestApp({ idempotency: { lockMs } });
    try {
      const key = await context.createKey(5);
      const keyHash = hashApiKey(key);
      // With every defaulted field given, the body the fingerprint sees is the body sent.
      const body = { query: 'personal data breach', top_k: 10 };
      // What the dead attempt did: claimed the key and paid, then never answered.
      const fingerprint = IdempotencyService.fingerprint({ method: 'POST', path: '/query', docId: undefined, body });
      const claim = await context.store.idempotency.claim({ keyHash, idempotencyKey: 'crashed', fingerprint, lockMs, ttlMs: 60_000 });
      assert.equal(claim.outcome, 'claimed');
      assert.equal((await context.store.ledger.debit(keyHash, '/query', { idempotencyRef: (claim as { ref: string }).ref })).outcome, 'charged');
      assert.equal(await context.balanceOf(key), 4);

      const whileHeld = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': 'crashed' },
        payload: JSON.stringify(body),
      });
      assertEnvelope(whileHeld, 409);
      await new Promise((resolve) => setTimeout(resolve, lockMs + 50));
      const retry = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': 'crashed' },
        payload: JSON.stringify(body),
      });
      assert.equal(retry.statusCode, 200);
      assert.equal(retry.headers['x-credits-remaining'], '4');
      assert.equal(await context.balanceOf(key), 4, 'the retry did not pay again');
      assert.ok(json(retry).resp.body.hits.total >= 1);
    } finally {
      await context.close();
    }
  });

  it('forgets entries after IDEMPOTENCY_TTL_S: the key can then name a new request', async () => {
    const context = await createTestApp({ idempotency: { ttlMs: 50 } });
    try {
      const key = await context.createKey(5);
      const send = (query: string) =>
        context.app.inject({
          method: 'POST',
          url: '/query',
          headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': 'short' },
          payload: JSON.stringify({ query }),
        });
      await send('first');
      await new Promise((resolve) => setTimeout(resolve, 80));
      const second = await send('second');
      assert.equal(second.statusCode, 200);
      assert.equal(second.headers['idempotent-replayed'], undefined);
      assert.equal(await context.balanceOf(key), 3);
    } finally {
      await context.close();
    }
  });

  it('replays after a restart of the service (the embedded store keeps the entry)', { skip: process.env.TEST_STORE === 'postgres' }, async () => {
    const dir = tempDir();
    try {
      const send = async (key: string) => {
        const store = new SqliteStore(dir.path);
        const context = await createTestApp({ store, documents: [] });
        try {
          return await context.app.inject({
            method: 'POST',
            url: '/query',
            headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': 'durable' },
            payload: '{"query":"x"}',
          });
        } finally {
          await context.close();
        }
      };
      const seed = new SqliteStore(dir.path);
      const { KeyAdmin } = await import('../../../src/billing/key-admin.js');
      const key = (await new KeyAdmin(seed.ledger).create(5)).key;
      await seed.close();
      const first = await send(key);
      const afterRestart = await send(key);
      assert.equal(afterRestart.headers['idempotent-replayed'], 'true');
      assert.equal(afterRestart.body, first.body);
    } finally {
      dir.remove();
    }
  });
});
