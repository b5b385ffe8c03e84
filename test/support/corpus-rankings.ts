import assert from 'node:assert/strict';
import { INDEX_UPKEEP, SqliteCorpus } from '../../src/corpus/sqlite-corpus.js';
import type { DocumentRecord } from '../../src/documents/document-store.js';
import type { IndexQuery } from '../../src/search/document-index.js';
import { documentsOf, tempDir } from './helper.js';

// Searches of a corpus, and the same searches of a corpus built fresh, for the corpus tests to
// compare an index with a history (caught up, rebuilt, read back from disk) against.

export const QUERIES: Array<Partial<IndexQuery>> = [
  { terms: ['river'] },
  { terms: ['stone', 'glacier', 'ember'] },
  { terms: ['quarry', 'thistle'], filters: [{ field: 'shelf', anyOf: ['a', 'c'] }] },
  { terms: ['harbour', 'lantern', 'orchard', 'meadow'], field: { kind: 'title' } },
  { terms: ['copper', 'falcon'], field: { kind: 'text' }, filters: [{ field: 'year', anyOf: [2001] }] },
  { terms: ['river', 'stone'], offset: 5, facets: { fields: ['shelf', 'year', 'absent'], limit: 10 } },
  { terms: ['ember'], filters: [{ field: 'shelf', anyOf: ['b'] }], offset: 2, facets: { fields: ['year'], limit: 2 } },
];

export async function rankings(corpus: SqliteCorpus) {
  return Promise.all(QUERIES.map((query) => corpus.search({ terms: [], field: { kind: 'all' }, filters: [], topK: 20, ...query })));
}

export function assertSameRankings(actual: Awaited<ReturnType<typeof rankings>>, expected: Awaited<ReturnType<typeof rankings>>): void {
  actual.forEach((result, index) => {
    assert.equal(result.total, expected[index].total, `query ${index}: total`);
    assert.deepEqual(result.facets, expected[index].facets, `query ${index}: facets`);
    if (QUERIES[index].facets)
      assert.ok(
        Object.values(result.facets ?? {}).some((values) => Object.keys(values).length > 0),
        `query ${index}: counted`,
      );
    assert.deepEqual(
      result.hits.map((hit) => hit.docId),
      expected[index].hits.map((hit) => hit.docId),
      `query ${index}: ranking`,
    );
    result.hits.forEach((hit, position) => {
      assert.ok(Math.abs(hit.score - expected[index].hits[position].score) < 1e-9, `query ${index}: score`);
    });
  });
}

/** A corpus holding exactly `final`, ingested once, to compare a corpus with a history against. */
export async function freshCorpus(final: DocumentRecord[]) {
  const dir = tempDir();
  const corpus = new SqliteCorpus(dir.path);
  await corpus.ingestDocuments(documentsOf(final));
  const result = await rankings(corpus);
  await corpus.close();
  dir.remove();
  return result;
}

// Every index behaviour holds for an index in the corpus's own thread and for one split over
// search threads (from the first document on); the reference rankings (freshCorpus) are always
// an index in one thread, so the split one is checked against it. The threads carry changes out
// three terms at a time, so that searches and other changes come between the slices of each, and
// take documents 7 at a time, so that every ingest's documents are spread over both threads (with
// the service's batches of 10,000, a test's ingest would all go to one).
export const INDEX_MODES = [
  { name: 'in its own thread', upkeep: INDEX_UPKEEP },
  { name: 'split over two search threads', upkeep: { ...INDEX_UPKEEP, searchThreads: 2, threadedRows: 0, threadSliceTerms: 3, indexBatchRows: 7 } },
];
