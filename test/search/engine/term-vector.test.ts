import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forEachStoredTerm, writeVarint } from '../../../src/search/engine/term-vector.js';

/** A stored vector as the corpus holds it: each term id as the gap from the previous, then its title and text frequencies. */
function storedVector(terms: Array<[number, number, number]>): Uint8Array {
  const bytes = new Uint8Array(terms.length * 15);
  let length = 0;
  let previous = 0;
  for (const [termId, title, text] of terms) {
    length = writeVarint(bytes, length, termId - previous);
    length = writeVarint(bytes, length, title);
    length = writeVarint(bytes, length, text);
    previous = termId;
  }
  return bytes.slice(0, length);
}

describe('forEachStoredTerm', () => {
  const terms: Array<[number, number, number]> = [
    [3, 1, 0],
    [200, 0, 2],
    [70_000, 1, 300],
    [9_000_000, 0, 1],
  ];

  it('reads every term with its frequencies, in term id order', () => {
    const read: Array<[number, number, number]> = [];
    forEachStoredTerm(storedVector(terms), (termId, title, text) => read.push([termId, title, text]));
    assert.deepEqual(read, terms);
  });

  it('stops past lastTermId, whether or not a term has that id', () => {
    for (const [lastTermId, expected] of [
      [70_000, 3],
      [69_999, 2],
      [2, 0],
      [Number.POSITIVE_INFINITY, 4],
    ] as const) {
      const read: number[] = [];
      forEachStoredTerm(storedVector(terms), (termId) => read.push(termId), lastTermId);
      assert.deepEqual(
        read,
        terms.slice(0, expected).map(([termId]) => termId),
        `up to ${lastTermId}`,
      );
    }
  });
});
