import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { FaceDownstream } from '../../support/face-downstream.js';
import { assertEnvelope, createTestApp, json, pngLikeImage, type TestContext } from '../../support/helper.js';

const IMAGE = pngLikeImage('fake image bytes for the proxy tests').toString('base64');
const MATCHES = [
  { doc_id: 'p1', confidence: 0.93, face_file: 'https://faces.example/p1.jpg', attributes: { age: 40, tags: ['a'] } },
  { doc_id: 'p2', confidence: 0.71, face_file: 'https://faces.example/p2.jpg' },
  { doc_id: 'p3', confidence: 0.42, face_file: 'https://faces.example/p3.jpg', extra: 'kept' },
];

describe('POST /face/search', () => {
  let downstream: FaceDownstream;
  let context: TestContext;
  let key: string;

  before(async () => {
    downstream = await new FaceDownstream().start();
    context = await createTestApp({
      face: downstream.client({ timeoutMs: 300, breakerFailures: 3, breakerCooldownMs: 60_000 }),
      settings: { imageMaxBytes: 1000 },
    });
  });
  after(async () => {
    await context.close();
    await downstream.stop();
  });
  beforeEach(async () => {
    key = await context.createKey(10);
    downstream.behaviour = { kind: 'matches', matches: MATCHES };
  });

  const search = (payload: unknown, headers: Record<string, string> = {}) =>
    context.app.inject({
      method: 'POST',
      url: '/face/search',
      headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  describe('happy', () => {
    it('mirrors the downstream matches and charges one credit', async () => {
      const response = await search({ image_b64: IMAGE });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(json(response), { status: 200, matches: MATCHES });
      assert.equal(response.headers['x-credits-remaining'], '9');
      assert.equal(await context.balanceOf(key), 9);
    });

    it('forwards the whole body with the image under image_b64, never the caller key', async () => {
      await search({ image_base64: IMAGE, top_k: 2, threshold: 0.5, gallery: 'staff', options: { nested: { deep: [1, 2] } } });
      const forwarded = downstream.lastBody();
      assert.deepEqual(forwarded, { image_b64: IMAGE, top_k: 2, threshold: 0.5, gallery: 'staff', options: { nested: { deep: [1, 2] } } });
      const received = downstream.received.at(-1)!;
      assert.equal(received.headers['x-api-key'], undefined);
      assert.ok(!received.body.includes(key));
    });

    it('takes the image from the aliases in order, removing them from the forwarded body', async () => {
      const other = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]).toString('base64');
      await search({ probe_image_b64: other, image_b64: IMAGE });
      assert.deepEqual(downstream.lastBody(), { image_b64: IMAGE });
      await search({ probe_image_b64: other });
      assert.deepEqual(downstream.lastBody(), { image_b64: other });
    });

    it('accepts URL-safe base64, missing padding and whitespace', async () => {
      const bytes = Buffer.concat([Buffer.from('RIFF'), Buffer.from([251, 255, 191, 0]), Buffer.from('WEBP'), Buffer.from([251, 255, 191, 0, 1])]);
      const urlSafe = bytes.toString('base64url');
      const spaced = `${bytes.toString('base64').slice(0, 4)}\n ${bytes.toString('base64').slice(4)}`;
      for (const image of [urlSafe, spaced]) {
        assert.equal((await search({ image_b64: image })).statusCode, 200);
        assert.deepEqual(Buffer.from(downstream.lastBody().image_b64 as string, 'base64'), bytes);
      }
    });

    it('returns at most top_k matches and drops those below threshold', async () => {
      assert.deepEqual(json(await search({ image_b64: IMAGE, top_k: 1 })).matches, MATCHES.slice(0, 1));
      assert.deepEqual(json(await search({ image_b64: IMAGE, threshold: 0.7 })).matches, MATCHES.slice(0, 2));
      assert.deepEqual(json(await search({ image_b64: IMAGE, threshold: 0 })).matches, MATCHES);
    });

    it('returns an empty list when the downstream finds nothing', async () => {
      downstream.behaviour = { kind: 'matches', matches: [] };
      assert.deepEqual(json(await search({ image_b64: IMAGE })), { status: 200, matches: [] });
    });
  });

  describe('validation (400/413 before authentication, never charged)', () => {
    const rejected = async (payload: unknown, status: number, pattern: RegExp) => {
      assertEnvelope(await search(payload), status, pattern);
      assert.equal(await context.balanceOf(key), 10);
    };

    it('answers 400 naming image_b64 when no image field is present', async () => {
      await rejected({}, 400, /image_b64/);
      await rejected({ top_k: 3, image: IMAGE }, 400, /image_b64/);
    });

    it('answers 400 to invalid base64 and non-string images', async () => {
      await rejected({ image_b64: 'not base64!' }, 400, /base64/);
      await rejected({ image_b64: 'abcde' }, 400, /base64/);
      await rejected({ image_b64: '' }, 400, /empty/);
      await rejected({ image_b64: 12 }, 400, /image_b64/);
    });

    it('answers 413 to a decoded image over IMAGE_MAX_BYTES', async () => {
      await rejected({ image_b64: pngLikeImage(Buffer.alloc(993)).toString('base64') }, 413, /limit/);
      assert.equal((await search({ image_b64: pngLikeImage(Buffer.alloc(992)).toString('base64') })).statusCode, 200);
    });

    it('answers 400 naming the accepted formats to anything but JPEG, PNG or WebP, judged by its bytes', async () => {
      const svg = '<svg xmlns="http://www.w3.org/2000/svg"><circle r="5"/></svg>';
      const gif = 'GIF89a\x01\x00\x01\x00';
      for (const bytes of [svg, gif, 'II*\x00 tiff', '\x89PNG but not the signature', 'RIFF....WAVE']) {
        await rejected({ image_b64: Buffer.from(bytes).toString('base64') }, 400, /JPEG, PNG or WebP/);
      }
      const received = downstream.received.length;
      await rejected({ probe_image_b64: Buffer.from(svg).toString('base64') }, 400, /^probe_image_b64 is not a JPEG, PNG or WebP image/);
      assert.equal(downstream.received.length, received, 'nothing was sent downstream');
    });

    it('answers 400 to a body nested deeper than 64 levels, before anything else, and keeps the breaker closed', async () => {
      const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
      for (let attempt = 0; attempt < 6; attempt++) {
        const body = `{"image_b64":"${IMAGE}","extra":${deep(5000)}}`;
        await rejected(body, 400, /64 levels/);
        await rejected(body.replace('{', '{"x":1,'), 400, /64 levels/);
      }
      const withKey = await search(`{"image_b64":"${IMAGE}","extra":${deep(5000)}}`, { 'idempotency-key': 'deep-1' });
      assertEnvelope(withKey, 400, /64 levels/);
      assert.equal((await search(`{"image_b64":"${IMAGE}","extra":${deep(62)}}`)).statusCode, 200, '64 levels pass, the breaker closed');
    });

    it('answers 400 to top_k outside 1..10 or not an integer, and threshold outside [0, 1]', async () => {
      for (const topK of [0, 11, '3', 2.5]) await rejected({ image_b64: IMAGE, top_k: topK }, 400, /top_k/);
      for (const threshold of [-0.1, 1.5, '0.5']) await rejected({ image_b64: IMAGE, threshold }, 400, /threshold/);
    });

    it('answers 400 to a probe_image_url that is not https or does not parse', async () => {
      await rejected({ probe_image_url: 'http://example.com/a.jpg' }, 400, /https/);
      await rejected({ probe_image_url: 'not a url' }, 400, /URL/);
    });

    it('refuses a probe_image_url on a loopback address with 400, without charging (test/faces/probe-fetch.test.ts has the rest)', async () => {
      await rejected({ probe_image_url: 'https://127.0.0.1/a.jpg' }, 400, /not a public address/);
    });

    it('validates before authenticating', async () => {
      assertEnvelope(await search({}, { 'x-api-key': 'ef'.repeat(32) }), 400, /image_b64/);
    });
  });

  describe('downstream failures', () => {
    const failing = async (status: number, pattern: RegExp) => {
      const before = await context.balanceOf(key);
      const response = await search({ image_b64: IMAGE });
      assertEnvelope(response, status, pattern);
      assert.equal(response.headers['x-credits-remaining'], String(before - 1), 'charged, and says so');
      assert.equal(await context.balanceOf(key), before - 1);
    };

    it('passes a downstream 4xx through with its message, charged', async () => {
      downstream.behaviour = { kind: 'status', status: 422, body: JSON.stringify({ message: 'no face detected' }) };
      await failing(422, /^no face detected$/);
      downstream.behaviour = { kind: 'status', status: 400, body: JSON.stringify({ error: 'bad image' }) };
      await failing(400, /^bad image$/);
      downstream.behaviour = { kind: 'status', status: 404, body: 'gallery missing', contentType: 'text/plain' };
      await failing(404, /^gallery missing$/);
    });

    it('answers 502 to a 5xx, a 3xx, garbage, a wrong shape, a dropped connection and a timeout', async () => {
      const cases: Array<FaceDownstream['behaviour']> = [
        { kind: 'status', status: 500, body: '{}' },
        { kind: 'status', status: 302, body: '' },
        { kind: 'status', status: 200, body: 'not json', contentType: 'text/plain' },
        { kind: 'status', status: 200, body: JSON.stringify({ results: [] }) },
        { kind: 'status', status: 200, body: JSON.stringify({ matches: [1, 2] }) },
        { kind: 'destroy' },
        { kind: 'hang' },
      ];
      for (const behaviour of cases) {
        // A fresh app per case keeps the breaker closed, so each case shows its own 502.
        const fresh = await createTestApp({ face: downstream.client({ timeoutMs: 300 }) });
        try {
          const own = await fresh.createKey(2);
          downstream.behaviour = behaviour;
          const response = await fresh.app.inject({
            method: 'POST',
            url: '/face/search',
            headers: { 'x-api-key': own, 'content-type': 'application/json' },
            payload: { image_b64: IMAGE },
          });
          assertEnvelope(response, 502);
          assert.equal(response.headers['x-credits-remaining'], '1');
        } finally {
          await fresh.close();
        }
      }
    });

    it('opens the breaker after consecutive failures: 503 before the debit, not charged', async () => {
      downstream.behaviour = { kind: 'status', status: 503, body: 'down' };
      for (let attempt = 0; attempt < 3; attempt++) assert.equal((await search({ image_b64: IMAGE })).statusCode, 502);
      assert.equal(await context.balanceOf(key), 7);
      const received = downstream.received.length;
      const response = await search({ image_b64: IMAGE });
      assertEnvelope(response, 503);
      assert.equal(response.headers['x-credits-remaining'], undefined);
      assert.equal(await context.balanceOf(key), 7);
      assert.equal(downstream.received.length, received, 'nothing sent downstream while open');
    });
  });

  describe('without a face service', () => {
    it('answers 503 after authentication and before the debit', async () => {
      const bare = await createTestApp();
      try {
        const own = await bare.createKey(3);
        const call = (apiKey: string, payload: unknown) =>
          bare.app.inject({ method: 'POST', url: '/face/search', headers: { 'x-api-key': apiKey }, payload: payload as object });
        assertEnvelope(await call(own, { image_b64: IMAGE }), 503, /not configured/);
        assertEnvelope(await call('12'.repeat(32), { image_b64: IMAGE }), 401);
        assertEnvelope(await call(own, {}), 400, /image_b64/);
        assert.equal(await bare.balanceOf(own), 3);
      } finally {
        await bare.close();
      }
    });
  });
});
