import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DocumentAnalyser, forEachStoredTerm, TermDictionary, writeVarint } from '../../../src/search/engine/term-vector.js';

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

describe('DocumentAnalyser in a language with accented letters', () => {
  /** The document's terms by name, with their title and text frequencies. */
  const termsOf = (analyser: DocumentAnalyser, dictionary: TermDictionary, title: string, text: string, language: string) => {
    const vector = analyser.analyse(title, text, { language }).terms;
    const names = new Map(dictionary.entries().map(({ id, term }) => [id, term]));
    const read: Record<string, [number, number]> = {};
    forEachStoredTerm(vector, (termId, inTitle, inText) => {
      const name = names.get(termId);
      if (name && name.charCodeAt(0) > 1) read[name] = [inTitle, inText];
    });
    return read;
  };

  it('finds a word written in any case, composed or decomposed, as one term, and folds what NFKC folds', () => {
    const dictionary = new TermDictionary();
    const analyser = new DocumentAnalyser(dictionary);
    // The same words again in a second document, so that the token table answers them.
    termsOf(analyser, dictionary, 'Häuser', 'x', 'de');
    const terms = termsOf(analyser, dictionary, 'Häuser HÄUSER ha\u0308user', 'Straße ª\u00a0Verträgen', 'de');
    assert.deepEqual(terms, { haus: [3, 0], strass: [0, 1], a: [0, 1], vertrag: [0, 1] });
  });
});
