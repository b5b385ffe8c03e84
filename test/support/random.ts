/**
 * A deterministic generator (mulberry32) for tests and benchmarks: the same seed gives the same
 * numbers, so a failing randomised test can be run again as it was, and every benchmark run builds
 * the same corpus.
 */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
