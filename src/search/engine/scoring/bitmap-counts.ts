import { popcount } from '../postings.js';

/**
 * How many of a dense list's postings in one word (`listBits`) come before the document at bit
 * `lowest`, visiting the word's documents in `scope` lowest first, `visited` of them before this
 * one. When every document of the word is visited, that is `visited`; otherwise they are counted,
 * so that only the documents in scope are visited: stepping through every document of the word
 * to reach them (a common word has a dozen or more in a block) took a quarter of the slowest
 * 3-word searches' time.
 */
export function postingsBefore(listBits: number, scope: number, lowest: number, visited: number): number {
  return scope === listBits ? visited : popcount(listBits & (lowest - 1));
}

/**
 * The documents in any of `bitmaps` or in `extra`, less those in `exclusion`, over the first
 * `words` words. Beyond two bitmaps, the first ones' union goes into `scratch`, two a pass.
 */
export function unionCount(
  bitmaps: Uint32Array[],
  extra: Uint32Array | null,
  exclusion: Uint32Array | null,
  words: number,
  scratch: Uint32Array,
): number {
  let unions = extra;
  let start = 0;
  for (; bitmaps.length - start > 2; start += 2) {
    const bits0 = bitmaps[start];
    const bits1 = bitmaps[start + 1];
    if (unions === null) for (let word = 0; word < words; word++) scratch[word] = bits0[word] | bits1[word];
    else for (let word = 0; word < words; word++) scratch[word] = unions[word] | bits0[word] | bits1[word];
    unions = scratch;
  }
  const bits0 = bitmaps[start] ?? null;
  const bits1 = bitmaps[start + 1] ?? null;
  let total = 0;
  for (let word = 0; word < words; word++) {
    let union = (unions === null ? 0 : unions[word]) | (bits0 === null ? 0 : bits0[word]) | (bits1 === null ? 0 : bits1[word]);
    if (exclusion !== null) union &= ~exclusion[word];
    total += popcount(union);
  }
  return total;
}

/**
 * How many of the first `length` of `documents` are in any of `bitmaps`. One or two bitmaps in
 * variables of their own: a loop over the array of bitmaps for every document took three times
 * as long (bench:search's 3-word searches at a million: 55-58 µs a search against 19-20).
 */
export function countInAny(documents: Int32Array, length: number, bitmaps: Uint32Array[]): number {
  let count = 0;
  if (bitmaps.length === 1) {
    const bits0 = bitmaps[0];
    for (let index = 0; index < length; index++) {
      const document = documents[index];
      count += (bits0[document >>> 5] >>> (document & 31)) & 1;
    }
  } else if (bitmaps.length === 2) {
    const bits0 = bitmaps[0];
    const bits1 = bitmaps[1];
    for (let index = 0; index < length; index++) {
      const document = documents[index];
      count += ((bits0[document >>> 5] | bits1[document >>> 5]) >>> (document & 31)) & 1;
    }
  } else {
    for (let index = 0; index < length; index++) {
      const document = documents[index];
      let inAny = 0;
      for (const bits of bitmaps) inAny |= bits[document >>> 5];
      count += (inAny >>> (document & 31)) & 1;
    }
  }
  return count;
}
