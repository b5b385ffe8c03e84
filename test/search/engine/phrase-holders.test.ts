import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startModuleWorker } from '../../../src/platform/worker-thread.js';
import { ENGLISH } from '../../../src/search/engine/languages.js';
import type { IndexedDocument, SearchField, TermSearch } from '../../../src/search/engine/search-index.js';
import { ON_DISK_ARRAYS } from '../../../src/search/engine/segments/documents-segment.js';
import { runInSlices } from '../../../src/search/engine/segments/in-slices.js';
import { readSegment, writeSegment } from '../../../src/search/engine/segments/segment-file.js';
import { ShardedIndex } from '../../../src/search/engine/sharded-index.js';
import { DocumentAnalyser, forEachStoredTerm, TermDictionary, termsSection } from '../../../src/search/engine/term-vector.js';
import { TextIndex } from '../../../src/search/engine/text-index.js';
import { SearchThreads } from '../../../src/search/engine/threads/search-threads.js';
import { phraseMatcher, phraseWords } from '../../../src/search/phrase.js';
import { tempDir } from '../../support/helper.js';
import { random } from '../../support/random.js';

// Few words, stopwords and compounds among them, so that phrases of two to four words hold often
// and their words are common enough for the index's dense lists.
const WORDS = ['data', 'protection', 'right', 'to', 'erasure', 'the', 'of', 'breach', 'breaches', 'IL-6', 'cell', 'cells', 'levels', '2016', 'a'];

interface Written {
  rowid: number;
  title: string;
  text: string;
}

function textOf(next: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

function writtenCorpus(count: number, seed: number): Written[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, position) => {
    // Some documents repeat a word past the frequency byte's caps (3 in the title, 63 in the text).
    const repeated = position % 97 === 0 ? ' breach'.repeat(70) : '';
    return {
      rowid: 10 + 3 * position,
      title: textOf(next, 1 + Math.floor(next() * 6)) + (position % 89 === 0 ? ' cell'.repeat(5) : ''),
      text: textOf(next, Math.floor(next() * 40)) + repeated,
    };
  });
}

function analysed(documents: Written[], dictionary: TermDictionary): IndexedDocument[] {
  const analyser = new DocumentAnalyser(dictionary);
  return documents.map((document) => ({ rowid: document.rowid, ...analyser.analyse(document.title, document.text, { year: 2016 }) }));
}

function phraseSearch(dictionary: TermDictionary, words: Array<string | null>, field: SearchField): TermSearch | undefined {
  const ids = words.map((word) => (word === null ? 0 : dictionary.idOf(ENGLISH.stem(word))));
  if (ids.includes(undefined)) return undefined;
  const terms = [...new Set(ids.filter((id) => id !== 0))] as number[];
  return { terms, field, filters: [], topK: 0, phrase: ids as number[] };
}

function expected(documents: Written[], words: Array<string | null>, field: SearchField): number[] {
  const holds = phraseMatcher(words);
  return documents
    .filter((document) => (field !== 'text' && holds(document.title)) || (field !== 'title' && holds(document.text)))
    .map((document) => document.rowid);
}

function randomPhrases(documents: Written[], seed: number, count: number): Array<Array<string | null>> {
  const next = random(seed);
  const phrases: Array<Array<string | null>> = [];
  while (phrases.length < count) {
    // Half taken from a document's text (so they hold somewhere), half made up.
    const source = next() < 0.5 ? documents[Math.floor(next() * documents.length)].text : textOf(next, 8);
    const tokens = source.split(' ');
    const start = Math.floor(next() * tokens.length);
    const words = phraseWords(tokens.slice(start, start + 2 + Math.floor(next() * 3)).join(' '));
    if (words.length >= 2) phrases.push(words);
  }
  return phrases;
}

const FIELDS: SearchField[] = ['all', 'title', 'text'];

describe('phrases from the postings’ positions', () => {
  const threads = new SearchThreads(2, 4096, startModuleWorker);
  after(() => threads.close());
  const documents = writtenCorpus(6000, 3);
  const dictionary = new TermDictionary();
  const vectors = analysed(documents, dictionary);

  it('stores every term’s positions after its terms, which term readers skip', () => {
    const vector = vectors[0].terms;
    const [start, end] = termsSection(vector, 0, vector.length);
    assert.equal(vector[0], 0);
    assert.ok(end < vector.length, 'positions follow the terms');
    let terms = 0;
    forEachStoredTerm(vector, () => terms++);
    assert.ok(terms > 0 && start > 0);
  });

  it('match the documents whose field holds the phrase, in one index, after a deletion, and read back from a segment', async () => {
    const index = new TextIndex();
    for (let start = 0; start < vectors.length; start += 700) index.add(vectors.slice(start, start + 700));
    const deleted = documents[5];
    index.remove(deleted.rowid, vectors[5].terms);
    const live = documents.filter((document) => document !== deleted);
    const dir = tempDir();
    const file = join(dir.path, 'phrases.seg');
    const captured = index.captureSegment();
    const written = await runInSlices(writeSegment(file, captured.scalars, captured.arrays));
    const restored = new TextIndex();
    restored.restoreSegment(readSegment(file, written));
    let nonEmpty = 0;
    randomPhrases(documents, 7, 60).forEach((words, round) => {
      const field = FIELDS[round % FIELDS.length];
      const search = phraseSearch(dictionary, words, field);
      if (!search) return;
      const want = expected(live, words, field);
      if (want.length > 0) nonEmpty++;
      for (const [name, each] of [
        ['built', index],
        ['restored', restored],
      ] as const) {
        const matched = each.everyMatch({ ...search, filter: null });
        assert.equal(matched.unverified, undefined, `${name}, round ${round}: checked from positions`);
        assert.deepEqual(Array.from(matched.rowids), want, `${name}, round ${round}: "${words.join(' ')}" in ${field}`);
      }
    });
    assert.ok(nonEmpty > 30, `${nonEmpty} phrases held somewhere`);
    dir.remove();
  });

  it('match from positions left in the segment file: after the file is gone, as lists grow, and written again from it', async () => {
    const firstPart = documents.length >> 1;
    const index = new TextIndex();
    index.add(vectors.slice(0, firstPart));
    const dir = tempDir();
    const written = async (name: string, from: TextIndex) => {
      const captured = from.captureSegment();
      return { file: join(dir.path, name), ...(await runInSlices(writeSegment(join(dir.path, name), captured.scalars, captured.arrays))) };
    };
    const first = await written('first.seg', index);
    const damaged = readFileSync(first.file);
    const stored = readSegment(first.file, first, ON_DISK_ARRAYS);
    assert.ok(stored.isStored('positions'));
    // A byte of the positions, which the read leaves in the file, is still checked.
    const positionsAt = damaged.indexOf(stored.stored('positions').read(0, 16));
    damaged[positionsAt + 3] ^= 0x20;
    writeFileSync(join(dir.path, 'damaged.seg'), damaged);
    assert.throws(() => readSegment(join(dir.path, 'damaged.seg'), first, ON_DISK_ARRAYS), /fails its checksum/);
    const restored = new TextIndex();
    restored.restoreSegment(stored);
    rmSync(first.file);
    const phrases = randomPhrases(documents, 13, 40);
    const check = (each: TextIndex, live: Written[], stage: string) => {
      let nonEmpty = 0;
      phrases.forEach((words, round) => {
        const search = phraseSearch(dictionary, words, FIELDS[round % FIELDS.length]);
        if (!search) return;
        const want = expected(live, words, search.field);
        if (want.length > 0) nonEmpty++;
        const matched = each.everyMatch({ ...search, filter: null });
        assert.equal(matched.unverified, undefined, `${stage}, round ${round}`);
        assert.deepEqual(Array.from(matched.rowids), want, `${stage}, round ${round}: "${words.join(' ')}" in ${search.field}`);
      });
      assert.ok(nonEmpty > 20, `${stage}: ${nonEmpty} phrases held somewhere`);
    };
    check(restored, documents.slice(0, firstPart), 'restored, its file deleted');
    const second = await written('second.seg', restored);
    restored.add(vectors.slice(firstPart));
    check(restored, documents, 'grown after the start');
    const again = new TextIndex();
    again.restoreSegment(readSegment(second.file, second, ON_DISK_ARRAYS));
    check(again, documents.slice(0, firstPart), 'written from positions left in a file');
    dir.remove();
  });

  it('match alike on search threads', async () => {
    const sharded = new ShardedIndex(threads);
    for (let start = 0; start < vectors.length; start += 500) sharded.add(vectors.slice(start, start + 500));
    await sharded.settled();
    for (const [round, words] of randomPhrases(documents, 11, 12).entries()) {
      const search = phraseSearch(dictionary, words, FIELDS[round % FIELDS.length]);
      if (!search) continue;
      const matched = await sharded.everyMatch(search);
      assert.equal(matched.unverified, undefined);
      assert.deepEqual(Array.from(matched.rowids), expected(documents, words, search.field), `round ${round}`);
    }
    sharded.drop();
  });

  it('are left to the caller to check when a word’s list holds a document stored without positions', () => {
    const index = new TextIndex();
    const older = documents.findIndex((document) => document.title.split(' ').includes('data'));
    const batch = vectors.slice(0, older + 200).map((vector, position) => {
      if (position !== older) return vector;
      const [start, end] = termsSection(vector.terms, 0, vector.terms.length);
      return { ...vector, terms: vector.terms.slice(start, end) };
    });
    index.add(batch);
    const search = phraseSearch(dictionary, ['data', 'protection'], 'all') as TermSearch;
    const matched = index.everyMatch({ ...search, filter: null });
    assert.equal(matched.unverified, true);
  });
});
