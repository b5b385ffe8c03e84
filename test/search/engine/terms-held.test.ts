import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startModuleWorker } from '../../../src/platform/worker-thread.js';
import { LocalIndex } from '../../../src/search/engine/local-index.js';
import { HELD, HELD_IN_FIELD, type SearchField, type SearchIndex } from '../../../src/search/engine/search-index.js';
import { ShardedIndex } from '../../../src/search/engine/sharded-index.js';
import { SearchThreads } from '../../../src/search/engine/threads/search-threads.js';
import { corpus, encode, type PlainDocument } from '../../support/plain-corpus.js';
import { random } from '../../support/random.js';

/** What termsHeld answers, worked out from the documents themselves. */
function expected(documents: Map<number, PlainDocument>, deleted: Set<number>, rowids: number[], terms: number[], field: SearchField): number[] {
  return rowids.flatMap((rowid) =>
    terms.map((termId) => {
      const document = documents.get(rowid);
      if (!document || deleted.has(rowid)) return 0;
      const inTitle = document.title.has(termId);
      const inText = document.text.has(termId);
      if (!inTitle && !inText) return 0;
      const inField = field === 'title' ? inTitle : field === 'text' ? inText : true;
      return HELD | (inField ? HELD_IN_FIELD : 0);
    }),
  );
}

describe('SearchIndex.termsHeld: which terms a few rows hold, from the postings', () => {
  const threads = new SearchThreads(2, 4096, startModuleWorker);
  after(() => threads.close());

  it('agrees with the documents for dense and sparse terms, fields, deleted and unknown rows, in this thread and over search threads', async () => {
    // Enough documents that the commonest terms are dense (bitmaps) and the rest sparse (streams).
    const documents = corpus(9000, 17);
    const byRowid = new Map(documents.map((document) => [document.rowid, document]));
    const local = new LocalIndex();
    const sharded = new ShardedIndex(threads);
    for (let start = 0; start < documents.length; start += 1000) {
      local.add(documents.slice(start, start + 1000).map(encode));
      sharded.add(documents.slice(start, start + 1000).map(encode));
    }
    local.trim();
    sharded.trim();
    const next = random(3);
    const deleted = new Set<number>();
    for (const document of documents.filter(() => next() < 0.05)) {
      deleted.add(document.rowid);
      for (const index of [local, sharded]) index.remove(document.rowid, encode(document).terms);
    }
    const indexes: Array<[string, SearchIndex]> = [
      ['local', local],
      ['sharded', sharded],
    ];
    for (let round = 0; round < 20; round++) {
      // Near documents come in any order; some rows are not in the index at all (2 is no row id here).
      const rowids = [...Array.from({ length: 40 }, () => documents[Math.floor(next() * documents.length)].rowid), 2];
      const terms = [1, 2, 3, ...Array.from({ length: 6 }, () => 1 + Math.floor(next() * 1200))];
      const field = (['all', 'title', 'text', 'metadata'] as const)[round % 4];
      for (const [name, index] of indexes) {
        const held = await index.termsHeld(Float64Array.from(rowids), terms, field);
        assert.deepEqual(Array.from(held), expected(byRowid, deleted, rowids, terms, field), `${name}, round ${round}, ${field}`);
      }
    }
    sharded.drop();
  });
});
