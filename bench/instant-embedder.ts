import type { Embedder } from '../src/embeddings/embedder.js';
import { random } from '../test/support/random.js';

export const INSTANT_DIMENSIONS = 384;

/**
 * A vector per text from a seeded generator keyed by the text's first characters: no model, no
 * wait, next to nothing computed, so that the figures are what the embedding path itself costs.
 */
export class InstantEmbedder implements Embedder {
  readonly model = 'instant';
  readonly dimensions = INSTANT_DIMENSIONS;

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      let seed = text.length;
      for (let i = 0; i < Math.min(64, text.length); i++) seed = Math.imul(seed ^ text.charCodeAt(i), 16_777_619);
      const next = random(seed);
      return Float32Array.from({ length: INSTANT_DIMENSIONS }, () => next() - 0.5);
    });
  }
}
