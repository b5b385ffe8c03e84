import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { editDistance, SortedTerms } from '../../../src/search/engine/sorted-terms.js';
import { metadataWordTerm } from '../../../src/search/engine/term-vector.js';
import { random } from '../../support/random.js';

/** Optimal string alignment distance, the textbook table. */
function plainDistance(a: string, b: string): number {
  const table = Array.from({ length: a.length + 1 }, (_, row) =>
    Array.from({ length: b.length + 1 }, (_, column) => (row === 0 ? column : column === 0 ? row : 0)),
  );
  for (let row = 1; row <= a.length; row++)
    for (let column = 1; column <= b.length; column++) {
      table[row][column] = Math.min(
        table[row - 1][column] + 1,
        table[row][column - 1] + 1,
        table[row - 1][column - 1] + (a[row - 1] === b[column - 1] ? 0 : 1),
      );
      if (row > 1 && column > 1 && a[row - 1] === b[column - 2] && a[row - 2] === b[column - 1])
        table[row][column] = Math.min(table[row][column], table[row - 2][column - 2] + 1);
    }
  return table[a.length][b.length];
}

function words(count: number, seed: number): string[] {
  const next = random(seed);
  // Few letters, so that words often lie an edit or two apart.
  const letters = 'abcdeilnorst';
  const found = new Set<string>();
  while (found.size < count)
    found.add(Array.from({ length: 2 + Math.floor(next() * 9) }, () => letters[Math.floor(next() * letters.length)]).join(''));
  return [...found];
}

describe('SortedTerms', () => {
  const vocabulary = words(4000, 3);
  const terms = new SortedTerms();
  // Terms looked up by spelling for one edit, as the dictionary's are.
  const bySpelling = new Map<string, number>();
  const spelt = new SortedTerms((term) => bySpelling.get(term));
  vocabulary.forEach((word, index) => {
    for (const [term, id] of [
      [word, index + 1],
      [metadataWordTerm('court', word), 100_000 + index],
    ] as const) {
      terms.add(term, id);
      spelt.add(term, id);
      bySpelling.set(term, id);
    }
  });

  it('finds every term within the edits, as the textbook table does, sorted and unsorted alike', () => {
    const next = random(8);
    const late = new SortedTerms();
    vocabulary.slice(0, 200).forEach((word, index) => {
      late.add(word, index + 1);
    });
    late.within('abc', 1);
    // Added after the first use: looked through unsorted.
    vocabulary.slice(200, 300).forEach((word, index) => {
      late.add(word, 201 + index);
    });
    for (let round = 0; round < 150; round++) {
      const base = vocabulary[Math.floor(next() * vocabulary.length)];
      // The word asked: a vocabulary word with an edit or two, or as it is.
      const chars = [...base];
      const edits = Math.floor(next() * 3);
      for (let edit = 0; edit < edits; edit++) {
        const at = Math.floor(next() * chars.length);
        const kind = Math.floor(next() * 4);
        if (kind === 0) chars.splice(at, 1);
        else if (kind === 1) chars.splice(at, 0, 'x');
        else if (kind === 2) chars[at] = 'z';
        else if (at + 1 < chars.length) [chars[at], chars[at + 1]] = [chars[at + 1], chars[at]];
      }
      const word = chars.join('');
      for (const maxEdits of [1, 2]) {
        const want = vocabulary
          .map((term, index) => ({ id: index + 1, term, edits: plainDistance(word, term) }))
          .filter((entry) => entry.edits <= maxEdits && entry.term !== word)
          .sort((a, b) => a.edits - b.edits || (a.term < b.term ? -1 : 1));
        assert.deepEqual(terms.within(word, maxEdits), want, `"${word}" within ${maxEdits}`);
        assert.deepEqual(spelt.within(word, maxEdits), want, `"${word}" within ${maxEdits}, looked up by spelling`);
        assert.deepEqual(
          spelt.within(word, maxEdits, metadataWordTerm('court', '')).map((entry) => entry.id),
          want.map((entry) => 100_000 + entry.id - 1),
          `"${word}" in a metadata field, looked up by spelling`,
        );
        const marked = terms.within(word, maxEdits, metadataWordTerm('court', ''));
        assert.deepEqual(
          marked.map((entry) => entry.id),
          want.map((entry) => 100_000 + entry.id - 1),
          `"${word}" in a metadata field`,
        );
        const fewer = want.filter((entry) => entry.id <= 300);
        assert.deepEqual(late.within(word, maxEdits), fewer, `"${word}" among terms not yet sorted`);
        for (const entry of want) assert.equal(editDistance(word, entry.term, maxEdits), entry.edits);
      }
    }
  });

  it('merges the terms added since its last sort once there are many', () => {
    const grown = new SortedTerms();
    vocabulary.slice(0, 1000).forEach((word, index) => {
      grown.add(word, index + 1);
    });
    grown.withPrefix('a', 1);
    vocabulary.slice(1000, 2000).forEach((word, index) => {
      grown.add(word, 1001 + index);
    });
    for (const prefix of ['a', 'ro', 'tes']) {
      const want = vocabulary
        .slice(0, 2000)
        .filter((word) => word.startsWith(prefix))
        .sort();
      assert.deepEqual(
        grown.withPrefix(prefix, 100_000).map((entry) => entry.term),
        want,
      );
    }
  });

  it('finds the terms beginning with a prefix, and only title and text terms unless marked', () => {
    for (const prefix of ['ab', 'lo', 'str', 'e', 'zz']) {
      const want = vocabulary.filter((word) => word.startsWith(prefix)).sort();
      assert.deepEqual(
        terms.withPrefix(prefix, 100_000).map((entry) => entry.term),
        want,
      );
      assert.equal(terms.withPrefix(metadataWordTerm('court', prefix), 100_000).length, want.length);
      assert.equal(terms.withPrefix(prefix, 3).length, Math.min(3, want.length));
    }
  });

  it('counts a swap of neighbours as one edit', () => {
    assert.equal(editDistance('gdrp', 'gdpr', 2), 1);
    assert.equal(editDistance('recieve', 'receive', 2), 1);
    assert.equal(editDistance('kitten', 'sitting', 2), 3);
  });
});
