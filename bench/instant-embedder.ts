import type { Embedder } from '../src/embeddings/embedder.js';
import { random } from '../test/support/random.js';

export const INSTANT_DIMENSIONS = 384;

/** Seeded random vectors that every text's vector is mixed from. */
const POOL = 1024;

/**
 * A vector per text, mixed from two of a fixed pool of seeded random vectors picked by a hash of
 * the text's first characters: no model, no wait, a few hundred additions a text, so that the
 * figures are what the embedding path itself costs. Texts of different starts get different vectors.
 */
export class InstantEmbedder implements Embedder {
  readonly model = 'instant';
  readonly dimensions = INSTANT_DIMENSIONS;
  private readonly pool: Float32Array;

  constructor() {
    const next = random(97);
    this.pool = Float32Array.from({ length: POOL * INSTANT_DIMENSIONS }, () => next() - 0.5);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      let hash = 2_166_136_261 ^ text.length;
      for (let i = 0; i < Math.min(64, text.length); i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16_777_619);
      const first = ((hash >>> 0) % POOL) * INSTANT_DIMENSIONS;
      const second = ((hash >>> 10) % POOL) * INSTANT_DIMENSIONS;
      const weight = 0.25 + ((hash >>> 20) & 0xff) / 512;
      const vector = new Float32Array(INSTANT_DIMENSIONS);
      for (let d = 0; d < INSTANT_DIMENSIONS; d++) vector[d] = this.pool[first + d] + weight * this.pool[second + d];
      return vector;
    });
  }
}
