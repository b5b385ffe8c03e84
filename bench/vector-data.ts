// The vectors of bench:vectors and bench:vector-build: random but clustered, as sentence embeddings
// of a corpus on many topics are, and their exact nearest neighbours as the truth recall is taken against.
import { random } from '../test/support/random.js';

export const DIMENSIONS = 384;
export const CLUSTERS = 1000;
export const K = 10;

/** Vectors around CLUSTERS random centres, normalised: what sentence embeddings of a corpus on many topics look like. */
export function clusteredVectors(count: number, seed: number): Float32Array {
  const next = random(seed);
  const centres = new Float32Array(CLUSTERS * DIMENSIONS);
  const centreNext = random(7);
  for (let i = 0; i < centres.length; i++) centres[i] = centreNext() - 0.5;
  const vectors = new Float32Array(count * DIMENSIONS);
  for (let row = 0; row < count; row++) {
    const centre = Math.floor(next() * CLUSTERS) * DIMENSIONS;
    let norm = 0;
    for (let d = 0; d < DIMENSIONS; d++) {
      const value = centres[centre + d] + (next() - 0.5) * 0.5;
      vectors[row * DIMENSIONS + d] = value;
      norm += value * value;
    }
    const scale = 1 / Math.sqrt(norm);
    for (let d = 0; d < DIMENSIONS; d++) vectors[row * DIMENSIONS + d] *= scale;
  }
  return vectors;
}

/** The exact K nearest of each query by cosine (the vectors are normalised: the dot product). */
export function exactNearest(vectors: Float32Array, queries: Float32Array): number[][] {
  const answers: number[][] = [];
  for (let q = 0; q < queries.length / DIMENSIONS; q++) {
    const best: Array<{ row: number; score: number }> = [];
    for (let row = 0; row < vectors.length / DIMENSIONS; row++) {
      let dot = 0;
      for (let d = 0; d < DIMENSIONS; d++) dot += vectors[row * DIMENSIONS + d] * queries[q * DIMENSIONS + d];
      if (best.length < K || dot > best[best.length - 1].score) {
        best.push({ row, score: dot });
        best.sort((a, b) => b.score - a.score);
        if (best.length > K) best.pop();
      }
    }
    answers.push(best.map((entry) => entry.row));
  }
  return answers;
}
