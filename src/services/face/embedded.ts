import type { FaceGalleryStore } from '../../store/store.js';
import { ENGINE_VERSION } from './engine/describe.js';
import { DEFAULT_THRESHOLD, rankFaces, type EnrolledFace } from './engine/matching.js';
import type { FaceEnginePool } from './engine/pool.js';
import type { FaceSearchBackend, FaceSearchOutcome } from './face-client.js';

const MAX_TOP_K = 10;

/**
 * Face search in this process: the engine describes the probe on a worker thread, and the probe is
 * compared with every enrolled face of the same engine version (a linear scan: 128 floats a face).
 */
export class EmbeddedFaceSearch implements FaceSearchBackend {
  private cached: { version: string; faces: EnrolledFace[] } | undefined;

  constructor(
    private readonly engine: FaceEnginePool,
    private readonly gallery: FaceGalleryStore,
  ) {}

  get ready(): Promise<void> {
    return this.engine.ready;
  }

  tryAcquire(): boolean {
    return true;
  }

  release(): void {}

  async search(body: Record<string, unknown>): Promise<FaceSearchOutcome> {
    const image = Buffer.from(String(body.image_b64), 'base64');
    let description;
    try {
      description = await this.engine.describe(image);
    } catch (error) {
      return { kind: 'failed', message: `The face engine failed: ${(error as Error).message}.` };
    }
    if (description.kind === 'undecodable') {
      return { kind: 'rejected', status: 400, message: `The image could not be decoded (${description.message}): send a JPEG, PNG, WebP, GIF, TIFF or AVIF image.` };
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
