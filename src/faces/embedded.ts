import { ENGINE_VERSION } from './engine/describe.js';
import { DEFAULT_THRESHOLD, type EnrolledFace, rankFaces } from './engine/matching.js';
import { type FaceEnginePool, FaceJobTimeoutError } from './engine/pool.js';
import type { FaceAdmission, FaceSearchBackend, FaceSearchOutcome } from './face-search.js';
import type { FaceGalleryStore } from './gallery.js';
import { ACCEPTED_IMAGE_FORMATS } from './image.js';

const MAX_TOP_K = 10;

/**
 * Face search in this process: the engine describes the probe on a worker thread, and the probe is
 * compared with every enrolled face of the same engine version (a linear scan: 128 floats a face).
 */
export class EmbeddedFaceSearch implements FaceSearchBackend {
  private cached: { version: string; faces: EnrolledFace[] } | undefined;
  /** Searches admitted and not yet finished: being described, waiting for a worker, or about to. */
  private admitted = 0;
  /** Until the models have loaded, a search would wait for them: it is refused instead, uncharged. */
  private warm = false;

  /** `queueMax`: how many searches may wait for a worker (FACE_QUEUE_MAX); more are refused before the debit. */
  constructor(
    private readonly engine: FaceEnginePool,
    private readonly gallery: FaceGalleryStore,
    private readonly queueMax = Number.POSITIVE_INFINITY,
  ) {
    // A failed load keeps refusing: every search would fail too.
    engine.ready.then(
      () => {
        this.warm = true;
      },
      () => undefined,
    );
  }

  get ready(): Promise<void> {
    return this.engine.ready;
  }

  /** Searches admitted and not finished: running, or queued for a worker. */
  get pending(): number {
    return this.admitted;
  }

  admit(): FaceAdmission {
    if (!this.warm) {
      return {
        admitted: false,
        message: 'The face engine is still loading its models. Retry in a few seconds; you were not charged.',
        retryAfterSeconds: 2,
      };
    }
    if (this.admitted >= this.engine.workers + this.queueMax) {
      const message = `The face engine is busy: ${this.admitted} searches are running or waiting. Retry in a moment; you were not charged.`;
      return { admitted: false, message, retryAfterSeconds: 1 };
    }
    this.admitted++;
    return { admitted: true };
  }

  release(): void {
    this.admitted = Math.max(0, this.admitted - 1);
  }

  async search(body: Record<string, unknown>): Promise<FaceSearchOutcome> {
    try {
      return await this.describeAndRank(body);
    } finally {
      this.release();
    }
  }

  private async describeAndRank(body: Record<string, unknown>): Promise<FaceSearchOutcome> {
    const image = Buffer.from(String(body.image_b64), 'base64');
    let description: Awaited<ReturnType<typeof this.engine.describe>>;
    try {
      description = await this.engine.describe(image);
    } catch (error) {
      if (error instanceof FaceJobTimeoutError) {
        const message = `The image took longer than ${error.timeoutMs} ms to process (FACE_JOB_TIMEOUT_MS): send a smaller ${ACCEPTED_IMAGE_FORMATS} image.`;
        return { kind: 'rejected', status: 422, message };
      }
      return { kind: 'failed', message: 'The face engine failed on this image.' };
    }
    if (description.kind === 'undecodable') {
      // The decoder's own words (libpng, glib) describe our internals, not the caller's mistake.
      return { kind: 'rejected', status: 400, message: `The image could not be decoded: it is damaged or not a ${ACCEPTED_IMAGE_FORMATS} image.` };
    }
    if (description.kind === 'no-face') {
      return { kind: 'rejected', status: 422, message: 'No face was found in the image. Send a photo in which one face is clearly visible.' };
    }
    const topK = typeof body.top_k === 'number' ? body.top_k : MAX_TOP_K;
    const threshold = typeof body.threshold === 'number' ? body.threshold : DEFAULT_THRESHOLD;
    return { kind: 'matches', matches: rankFaces(description.descriptor, await this.faces(), topK, threshold) };
  }

  private async faces(): Promise<EnrolledFace[]> {
    const version = await this.gallery.version();
    if (this.cached?.version !== version) {
      const faces = (await this.gallery.list())
        .filter((face) => face.engine === ENGINE_VERSION)
        .map((face) => ({ docId: face.docId, descriptor: Float32Array.from(face.descriptor), faceFile: face.faceFile, attributes: face.attributes }));
      this.cached = { version, faces };
    }
    return this.cached.faces;
  }

  async ping(): Promise<number | null> {
    const started = performance.now();
    await this.engine.ready;
    return performance.now() - started;
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}
