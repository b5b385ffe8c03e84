import { frequencyByte } from '../../src/search/engine/postings.js';
import { BM25F } from '../../src/search/engine/scoring/bm25f.js';
import type { IndexedDocument, SearchField } from '../../src/search/engine/search-index.js';
import { writeVarint } from '../../src/search/engine/term-vector.js';
import { random } from './random.js';

// A corpus of term ids drawn with a skew, and its rankings computed the obvious way, for the
// engine's tests to hold the index to.

export interface PlainDocument {
  rowid: number;
  title: Map<number, number>;
  text: Map<number, number>;
  titleLength: number;
  textLength: number;
}

export function encode(document: PlainDocument): IndexedDocument {
  const ids = [...new Set([...document.title.keys(), ...document.text.keys()])].sort((a, b) => a - b);
  const bytes = new Uint8Array(ids.length * 15);
  let offset = 0;
  let previous = 0;
  for (const id of ids) {
    offset = writeVarint(bytes, offset, id - previous);
    offset = writeVarint(bytes, offset, document.title.get(id) ?? 0);
    offset = writeVarint(bytes, offset, document.text.get(id) ?? 0);
    previous = id;
  }
  return { rowid: document.rowid, titleLength: document.titleLength, textLength: document.textLength, terms: bytes.slice(0, offset) };
}

/**
 * Words of `corpus` by default: with its skew, 6,000 documents hold about 230 of them densely (in
 * 1/32 of the documents or more), 440 between that and rare, and 530 rarely (1/64 or less), so
 * searches meet every kind of list. (At 300 words every one was dense.)
 */
export const VOCABULARY = 1200;

/** Documents drawing words 1..vocabulary with a Zipf-like skew, so some lists turn dense. */
export function corpus(count: number, seed: number, vocabulary = VOCABULARY): PlainDocument[] {
  const next = random(seed);
  const word = () => 1 + Math.floor(vocabulary * next() ** 3);
  return Array.from({ length: count }, (_, index) => {
    const title = new Map<number, number>();
    const text = new Map<number, number>();
    const titleLength = 1 + Math.floor(next() * 6);
    const textLength = 5 + Math.floor(next() * 60);
    for (let i = 0; i < titleLength; i++) title.set(word(), (title.get(word()) ?? 0) + 1);
    for (let i = 0; i < textLength; i++) {
      const id = word();
      text.set(id, (text.get(id) ?? 0) + 1);
    }
    return { rowid: 3 * index + 1, title, text, titleLength, textLength };
  });
}

/** The same ranking computed the obvious way: every document, every term. */
export function exhaustive(
  documents: PlainDocument[],
  deleted: Set<number>,
  terms: number[],
  allowed: (rowid: number) => boolean,
  field: SearchField = 'all',
) {
  const live = documents.filter((document) => !deleted.has(document.rowid));
  const averageTitle = live.reduce((sum, document) => sum + document.titleLength, 0) / live.length;
  const averageText = live.reduce((sum, document) => sum + document.textLength, 0) / live.length;
  const { k1, b, titleWeight } = BM25F;
  const idfs = new Map(
    terms.map((termId) => {
      const df = live.filter((other) => other.title.has(termId) || other.text.has(termId)).length;
      return [termId, Math.log(1 + (live.length - df + 0.5) / (df + 0.5))];
    }),
  );
  const scored: Array<{ rowid: number; score: number }> = [];
  // Metadata words count as text, without length normalisation.
  const inField = (document: PlainDocument, termId: number) =>
    (field !== 'text' && field !== 'metadata' && document.title.has(termId)) || (field !== 'title' && document.text.has(termId));
  for (const document of live) {
    if (!terms.some((termId) => inField(document, termId))) continue;
    if (!allowed(document.rowid)) continue;
    let score = 0;
    for (const termId of terms) {
      const frequency = frequencyByte(document.title.get(termId) ?? 0, document.text.get(termId) ?? 0);
      if (!inField(document, termId)) continue;
      const idf = idfs.get(termId)!;
      const titlePart = (frequency >>> 6) / (1 - b + (b * document.titleLength) / averageTitle);
      const textPart = (frequency & 63) / (1 - b + (b * document.textLength) / averageText);
      const pseudo =
        field === 'title' ? titlePart : field === 'text' ? textPart : field === 'metadata' ? frequency & 63 : titleWeight * titlePart + textPart;
      score += (idf * (k1 + 1) * pseudo) / (pseudo + k1);
    }
    scored.push({ rowid: document.rowid, score });
  }
  return scored.sort((x, y) => y.score - x.score || x.rowid - y.rowid);
}

export function query(next: () => number, vocabulary: number): number[] {
  const count = 1 + Math.floor(next() * 8);
  const terms = new Set<number>();
  for (let i = 0; i < count; i++) terms.add(1 + Math.floor(vocabulary * next() ** 2));
  return [...terms];
}
