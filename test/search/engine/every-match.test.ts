import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startModuleWorker } from '../../../src/platform/worker-thread.js';
import { LocalIndex } from '../../../src/search/engine/local-index.js';
import type { MatchedRows, SearchField, TermSearch } from '../../../src/search/engine/search-index.js';
import { ShardedIndex } from '../../../src/search/engine/sharded-index.js';
import { TextIndex } from '../../../src/search/engine/text-index.js';
import { SearchThreads } from '../../../src/search/engine/threads/search-threads.js';
import { corpus, encode, exhaustive, query, VOCABULARY } from '../../support/plain-corpus.js';
import { random } from '../../support/random.js';

const FIELDS: SearchField[] = ['all', 'title', 'text', 'metadata'];

/** Matches as "rowid:score" rounded, ascending by row id. */
function rounded(rows: Array<{ rowid: number; score: number }>): string[] {
  return [...rows].sort((a, b) => a.rowid - b.rowid).map((row) => `${row.rowid}:${row.score.toFixed(9)}`);
}

function asRows(matched: MatchedRows): Array<{ rowid: number; score: number }> {
  return Array.from(matched.rowids, (rowid, index) => ({ rowid, score: matched.scores[index] }));
}

describe('every match of a search (for sorts and structured queries)', () => {
  const threads = new SearchThreads(2, 4096, startModuleWorker);
  after(() => threads.close());

  it('is every document holding a term in the field, with the score the ranking gives it, deletions and filters applied', () => {
    const documents = corpus(3000, 41);
    const next = random(5);
    const index = new TextIndex();
    index.add(documents.map(encode));
    const deleted = new Set<number>();
    for (const document of documents.filter(() => next() < 0.1)) {
      deleted.add(document.rowid);
      index.remove(document.rowid, encode(document).terms);
    }
    for (let round = 0; round < 24; round++) {
      const terms = query(next, VOCABULARY);
      const field = FIELDS[round % FIELDS.length];
      const expected = exhaustive(documents, deleted, terms, () => true, field);
      const matched = index.everyMatch({ terms, field, filter: null, topK: 0 });
      const byRowid = new Map(expected.map((row) => [row.rowid, row.score]));
      assert.deepEqual(
        Array.from(matched.rowids),
        [...byRowid.keys()].sort((x, y) => x - y),
        `round ${round}: the matches`,
      );
      // The index's length normalisations are float32: scores agree to about 1e-6.
      matched.rowids.forEach((rowid, position) => {
        assert.ok(Math.abs(matched.scores[position] - (byRowid.get(rowid) as number)) < 1e-5, `round ${round}: ${rowid}'s score`);
      });
      const ranked = index.search({ terms, field, filter: null, topK: 5 });
      const best = [...asRows(matched)].sort((x, y) => y.score - x.score).slice(0, 5);
      ranked.hits.slice(0, 5).forEach((hit, position) => {
        assert.ok(Math.abs(hit.score - best[position].score) < 1e-9, `round ${round}: the ranking's scores`);
      });
    }
  });

  it('reads many terms, as a prefix expands, over many ranges of documents: the scores of each term alone, summed in order', () => {
    const documents = corpus(70_000, 47);
    const next = random(9);
    const index = new TextIndex();
    index.add(documents.map(encode));
    for (const document of documents.filter(() => next() < 0.05)) index.remove(document.rowid, encode(document).terms);
    const terms = Array.from({ length: 40 }, (_, position) => 1 + ((position * 37) % VOCABULARY));
    const together = index.everyMatch({ terms, field: 'all', filter: null, topK: 0 });
    const summed = new Map<number, number>();
    for (const term of terms) {
      const alone = index.everyMatch({ terms: [term], field: 'all', filter: null, topK: 0 });
      alone.rowids.forEach((rowid, position) => {
        summed.set(rowid, (summed.get(rowid) ?? 0) + alone.scores[position]);
      });
    }
    assert.ok(together.rowids[together.rowids.length - 1] > documents[65_536].rowid, 'the matches span more than one range');
    assert.deepEqual(rounded(asRows(together)), rounded([...summed].map(([rowid, score]) => ({ rowid, score }))));
  });

  it('with matchAll, every document the filter and the allowed rows allow, scoring 0 without a term', async () => {
    const documents = corpus(2500, 43);
    const local = new LocalIndex();
    const sharded = new ShardedIndex(threads);
    for (let start = 0; start < documents.length; start += 500) {
      const batch = documents.slice(start, start + 500).map(encode);
      local.add(batch);
      sharded.add(documents.slice(start, start + 500).map(encode));
    }
    local.trim();
    sharded.trim();
    const next = random(8);
    const allowed = Float64Array.from(documents.filter(() => next() < 0.3).map((document) => document.rowid));
    const searches: TermSearch[] = [
      { terms: [], field: 'all', filters: [[3, 4]], topK: 0, matchAll: true },
      { terms: [], field: 'all', filters: [], topK: 0, matchAll: true, allowedRows: allowed },
      { terms: query(next, VOCABULARY), field: 'text', filters: [[3, 4, 5]], topK: 0, allowedRows: allowed },
      { terms: query(next, VOCABULARY), field: 'all', filters: [], excluded: [5], topK: 0, matchAll: true, facets: [[1, 2, 3]] },
    ];
    for (const search of searches) {
      const here = local.everyMatch(search);
      const there = await sharded.everyMatch(search);
      assert.deepEqual(rounded(asRows(there)), rounded(asRows(here)), JSON.stringify(search.allowedRows ? 'allowed rows' : search));
      assert.deepEqual(there.facets, here.facets);
    }
    const restricted = local.everyMatch(searches[1]);
    assert.deepEqual(Array.from(restricted.rowids), Array.from(allowed));
    assert.ok(restricted.scores.every((score) => score === 0));
    sharded.drop();
  });
});
