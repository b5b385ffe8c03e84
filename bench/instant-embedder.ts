import type { Embedder } from '../src/embeddings/embedder.js';

export const INSTANT_DIMENSIONS = 384;

/**
 * A vector per text of seeded random numbers in [-0.5, 0.5), keyed by the text's first
 * characters: no model, no wait, a generator step a number in one tight loop, so that the figures
 * are what the embedding path itself costs. Independent random vectors are the hardest case for a
 * graph index to search: the semantic figures do not flatter it.
 */
export class InstantEmbedder implements Embedder {
  readonly model = 'instant';
  readonly dimensions = INSTANT_DIMENSIONS;

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      let state = text.length;
      for (let i = 0; i < Math.min(64, text.length); i++) state = Math.imul(state ^ text.charCodeAt(i), 16_777_619);
      const vector = new Float32Array(INSTANT_DIMENSIONS);
      // mulberry32, as test/support/random.ts, inlined.
      for (let d = 0; d < INSTANT_DIMENSIONS; d++) {
        state = (state + 0x6d2b79f5) | 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        vector[d] = ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296 - 0.5;
      }
      return vector;
    });
  }
}
