import type { Pooling } from './model-folder.js';

/**
 * One vector per sequence from a model's last hidden states ([batch, sequence, hidden], laid end
 * to end): the mean of the states its attention mask keeps, or its first ([CLS]) state; then
 * divided by its length, as sentence-transformers' Normalize does, so that a dot product is a cosine.
 */
export function pooledVectors(states: Float32Array, dims: readonly number[], mask: ArrayLike<bigint | number>, pooling: Pooling): Float32Array[] {
  const [batch, sequence, hidden] = dims;
  const vectors: Float32Array[] = [];
  for (let row = 0; row < batch; row++) {
    const vector = new Float32Array(hidden);
    const base = row * sequence * hidden;
    if (pooling === 'cls') vector.set(states.subarray(base, base + hidden));
    else {
      let kept = 0;
      for (let position = 0; position < sequence; position++) {
        if (Number(mask[row * sequence + position]) === 0) continue;
        kept++;
        const offset = base + position * hidden;
        for (let d = 0; d < hidden; d++) vector[d] += states[offset + d];
      }
      if (kept > 0) for (let d = 0; d < hidden; d++) vector[d] /= kept;
    }
    vectors.push(normalised(vector));
  }
  return vectors;
}

function normalised(vector: Float32Array): Float32Array {
  let squares = 0;
  for (const value of vector) squares += value * value;
  const length = Math.sqrt(squares);
  if (length > 0) for (let d = 0; d < vector.length; d++) vector[d] /= length;
  return vector;
}
