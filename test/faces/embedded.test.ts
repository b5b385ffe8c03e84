import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { enrollFaces, readManifest } from '../../src/cli/commands/faces-enroll.js';
import { loadConfig } from '../../src/config.js';
import { EmbeddedFaceSearch } from '../../src/faces/embedded.js';
import { FaceEnginePool } from '../../src/faces/engine/pool.js';
import { FaceClient } from '../../src/faces/face-client.js';
import { startFaceService } from '../../src/http/face-service.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { assertEnvelope, createTestApp, json, type TestContext, tempDir } from '../support/helper.js';
import { slowImage } from '../support/images.js';

const FACES = new URL('../fixtures/faces/', import.meta.url).pathname;
const image = (file: string) => readFileSync(join(FACES, file)).toString('base64');

/** Real photos through the real engine: a few people enrolled with the CLI's code, searched over HTTP. */
describe('the embedded face engine, end to end', () => {
  const dir = tempDir();
  let store: SqliteStore;
  let engine: FaceEnginePool;
  let context: TestContext;
  let key: string;

  before(async () => {
    store = new SqliteStore(dir.path);
    engine = new FaceEnginePool(1);
    await engine.ready;
    const manifest = join(dir.path, 'gallery.jsonl');
    writeFileSync(
      manifest,
      [
        { doc_id: 'df01', image: join(FACES, 'deepface/img1.jpg'), face_file: 'https://faces.example/df01.jpg', attributes: { team: 'a' } },
        { doc_id: 'df02', image: join(FACES, 'deepface/img26.jpg'), face_file: 'https://faces.example/df02.jpg' },
        { doc_id: 'amy', image: image('faceapijs-bbt/amy1.png'), face_file: 'https://faces.example/amy.png' },
      ]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    const summary = await enrollFaces(store, engine, manifest, await readManifest(manifest));
    assert.equal(summary.enrolled, 3);
    context = await createTestApp({ store, face: new EmbeddedFaceSearch(engine, store.faces), documents: [] });
    key = await context.createKey(20);
  });
  after(async () => {
    await context.close();
    dir.remove();
  });

  const search = (payload: Record<string, unknown>) =>
    context.app.inject({
      method: 'POST',
      url: '/face/search',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });

  it('finds the right person first for other photos of them, and charges one credit each', async () => {
    for (const [file, expected] of [
      ['deepface/img2.jpg', 'df01'],
      ['deepface/img27.jpg', 'df02'],
      ['faceapijs-bbt/amy2.png', 'amy'],
    ] as const) {
      const before = await context.balanceOf(key);
      const response = await search({ image_b64: image(file), top_k: 3, threshold: 0 });
      assert.equal(response.statusCode, 200, response.body);
      const { matches } = json(response);
      assert.equal(matches[0].doc_id, expected, `${file}: ${JSON.stringify(matches)}`);
      assert.ok(matches[0].confidence > 0.5 && matches[0].confidence <= 1);
      assert.match(matches[0].face_file, /^https:\/\/faces\.example\//);
      assert.equal(await context.balanceOf(key), before - 1);
    }
  });

  it('returns attributes, and only faces above the default threshold unless threshold 0 is asked', async () => {
    const strict = json(await search({ image_b64: image('deepface/img2.jpg') }));
    assert.deepEqual(
      strict.matches.map((match: { doc_id: string }) => match.doc_id),
      ['df01'],
    );
    assert.deepEqual(strict.matches[0].attributes, { team: 'a' });
    const all = json(await search({ image_b64: image('deepface/img2.jpg'), threshold: 0 }));
    assert.equal(all.matches.length, 3);
  });

  it('answers 422 to an image with no face and 400 to bytes that are not an image', async () => {
    const blank = (
      await sharp({ create: { width: 200, height: 200, channels: 3, background: { r: 90, g: 140, b: 200 } } })
        .jpeg()
        .toBuffer()
    ).toString('base64');
    assertEnvelope(await search({ image_b64: blank }), 422, /No face/);
    assertEnvelope(await search({ image_b64: Buffer.from('certainly not an image').toString('base64') }), 400, /JPEG, PNG or WebP/);
    const truncated = readFileSync(join(FACES, 'faceapijs-bbt/amy1.png')).subarray(0, 300).toString('base64');
    const body = assertEnvelope(await search({ image_b64: truncated }), 400, /could not be decoded: it is damaged/);
    assert.doesNotMatch(body.message, /vips|libpng|glib|png read|xml/i, 'no decoder internals');
  });

  it('reports face searches on /metrics: their time by result, and the jobs admitted and not finished', async () => {
    const { token } = await new AdminTokens(context.store.admin).create('prometheus', true);
    const scrape = async () => {
      const text = (await context.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } })).body;
      const count = (result: string) => Number(new RegExp(`face_search_duration_seconds_count\\{result="${result}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
      return { matches: count('matches'), rejected: count('rejected'), jobs: /metered_search_face_jobs (\d+)/.exec(text)?.[1] };
    };
    const before = await scrape();
    await search({ image_b64: image('deepface/img2.jpg') });
    const blank = await sharp({ create: { width: 200, height: 200, channels: 3, background: { r: 90, g: 140, b: 200 } } })
      .jpeg()
      .toBuffer();
    assert.equal((await search({ image_b64: blank.toString('base64') })).statusCode, 422);
    const after = await scrape();
    assert.deepEqual(
      { matches: after.matches - before.matches, rejected: after.rejected - before.rejected, jobs: after.jobs },
      { matches: 1, rejected: 1, jobs: '0' },
    );
  });

  it('stops finding a removed face on the next search', async () => {
    assert.equal(await store.faces.remove('amy'), true);
    const after = json(await search({ image_b64: image('faceapijs-bbt/amy2.png'), threshold: 0 }));
    assert.ok(after.matches.every((match: { doc_id: string }) => match.doc_id !== 'amy'));
  });

  it('answers 503 with Retry-After, uncharged, while the models load and when FACE_QUEUE_MAX searches already wait', async () => {
    const pool = new FaceEnginePool(1);
    const bounded = await createTestApp({ face: new EmbeddedFaceSearch(pool, store.faces, 0), documents: [] });
    try {
      const loading = await bounded.app.inject({ url: '/readyz' });
      assertEnvelope(loading, 503, /face engine is still loading/);
      const early = await bounded.createKey(5);
      const refusedEarly = await bounded.app.inject({
        method: 'POST',
        url: '/face/search',
        headers: { 'x-api-key': early },
        payload: { image_b64: image('deepface/img2.jpg') },
      });
      assertEnvelope(refusedEarly, 503, /still loading its models/);
      assert.equal(await bounded.balanceOf(early), 5, 'not charged while loading');
      await pool.ready;
      const own = await bounded.createKey(5);
      const call = (payload: Record<string, unknown>) =>
        bounded.app.inject({ method: 'POST', url: '/face/search', headers: { 'x-api-key': own }, payload });
      const slow = call({ image_b64: (await slowImage()).toString('base64') });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const refused = await call({ image_b64: image('deepface/img2.jpg') });
      assertEnvelope(refused, 503, /busy/);
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal((await slow).statusCode, 422, 'the slow one ran: no face in a plain picture');
      assert.equal(await bounded.balanceOf(own), 4, 'only the search that ran was charged');
      assert.equal((await call({ image_b64: image('deepface/img2.jpg') })).statusCode, 200, 'admitted again once the queue drained');
    } finally {
      await bounded.close();
    }
  });

  it('serves the same engine as a downstream face service (metered-search face-service) that the proxy can use', async () => {
    const service = await startFaceService(loadConfig({ DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1', FACE_WORKERS: '1' }));
    const client = new FaceClient({ url: `${service.url}/search`, timeoutMs: 10_000, breakerFailures: 3, breakerCooldownMs: 1000 });
    try {
      const outcome = await client.search({ image_b64: image('deepface/img27.jpg'), threshold: 0 });
      assert.equal(outcome.kind, 'matches');
      assert.equal((outcome as unknown as { matches: Array<{ doc_id: string }> }).matches[0].doc_id, 'df02');
      const noFace = await client.search({ image_b64: Buffer.from('nope').toString('base64') });
      assert.deepEqual(noFace.kind, 'rejected');
      assert.equal(typeof (await client.ping()), 'number');
    } finally {
      await client.close();
      await service.close();
    }
  });
});
