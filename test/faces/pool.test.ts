import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { FaceEnginePool, FaceJobTimeoutError } from '../../src/faces/engine/pool.js';
import { slowImage } from '../support/images.js';

const IMAGE = readFileSync(new URL('../fixtures/faces/faceapijs-bbt/amy1.png', import.meta.url));

describe('the face engine pool', () => {
  const pool = new FaceEnginePool(1);
  after(() => pool.close());

  it('replaces a worker that dies, failing only the image it held', async () => {
    await pool.ready;
    const worker = (pool as unknown as { slots: Array<{ worker: Worker }> }).slots[0].worker;
    const held = pool.describe(IMAGE);
    await worker.terminate();
    await assert.rejects(held, /worker stopped/);
    const next = await pool.describe(IMAGE);
    assert.equal(next.kind, 'face', 'the replacement worker serves the next image');
  });

  it('stops an image that holds its worker past FACE_JOB_TIMEOUT_MS, and sends the next one to a new worker', async () => {
    // 50 ms is far less than any image takes (decoding alone, then at least one 0.1-0.3 s detection pass).
    const limited = new FaceEnginePool(1, { jobTimeoutMs: 50 });
    try {
      await limited.ready;
      const first = (limited as unknown as { slots: Array<{ worker: Worker }> }).slots[0].worker;
      const slow = limited.describe(await slowImage());
      const next = limited.describe(IMAGE);
      await assert.rejects(slow, (error) => error instanceof FaceJobTimeoutError && /50 ms/.test(error.message));
      await assert.rejects(next, FaceJobTimeoutError, 'the next image ran, on the replacement worker, under the same limit');
      assert.notEqual((limited as unknown as { slots: Array<{ worker: Worker }> }).slots[0].worker, first);
    } finally {
      await limited.close();
    }
  });

  it('refuses work once closed', async () => {
    const closed = new FaceEnginePool(1);
    await closed.ready;
    await closed.close();
    await assert.rejects(closed.describe(IMAGE), /closed/);
  });
});
