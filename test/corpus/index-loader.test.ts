import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { loadIndexOnWorker } from '../../src/corpus/index-loader.js';
import { INDEX_UPKEEP, SqliteCorpus } from '../../src/corpus/sqlite-corpus.js';
import type { IndexQuery } from '../../src/search/document-index.js';
import type { SearchField } from '../../src/search/engine/search-index.js';
import { TextIndex } from '../../src/search/engine/text-index.js';
import { syntheticDocuments as documents, documentsOf, SYNTHETIC_WORDS, tempDir } from '../support/helper.js';

/** A corpus with a history: ingested, partly re-ingested, partly deleted (so its deletion log is not empty). */
async function corpusWithHistory(path: string): Promise<{ live: number; removals: number }> {
  const corpus = new SqliteCorpus(path);
  try {
    await corpus.ingestDocuments(documentsOf(documents(5000, 11)));
    await corpus.ingestDocuments(documentsOf(documents(300, 12).map((document, index) => ({ ...document, docId: `doc-${index * 3}` }))));
    for (const docId of ['doc-1', 'doc-2', 'doc-4000']) assert.equal(await corpus.deleteDocument(docId), true);
    return { live: 4997, removals: 303 };
  } finally {
    await corpus.close();
  }
}

/** The index built on this thread from the file's rows, as SqliteCorpus builds one without a worker. */
function indexBuiltHere(file: string): TextIndex {
  const db = new Database(file, { readonly: true });
  const index = new TextIndex();
  const rows = db.prepare('SELECT id, title_length, text_length, terms FROM documents ORDER BY id').all() as Array<{
    id: number;
    title_length: number;
    text_length: number;
    terms: Uint8Array;
  }>;
  for (let start = 0; start < rows.length; start += 1000) {
    index.add(
      rows.slice(start, start + 1000).map((row) => ({ rowid: row.id, titleLength: row.title_length, textLength: row.text_length, terms: row.terms })),
    );
  }
  db.close();
  return index;
}

describe('loading the search index with a worker thread', { timeout: 60_000 }, () => {
  it('builds the same index as this thread would, batch after batch, and says which deletions it has seen', async () => {
    const dir = tempDir();
    try {
      const { live, removals } = await corpusWithHistory(dir.path);
      const file = join(dir.path, 'corpus.sqlite');
      // Batches of 7 rows: hundreds of them, so the worker runs ahead of this thread and waits.
      const { index, removalsSeen } = await loadIndexOnWorker(file, 7);
      const expected = indexBuiltHere(file);
      assert.equal(removalsSeen, removals);
      assert.equal(index.liveDocuments, live);
      assert.equal(index.highestRowid, expected.highestRowid);
      const db = new Database(file, { readonly: true });
      const termIds = db.prepare('SELECT id FROM terms ORDER BY id').pluck().all() as number[];
      const rows = db.prepare('SELECT id, doc_id, title FROM documents ORDER BY id').all() as Array<{ id: number; doc_id: string; title: string }>;
      db.close();
      for (const row of rows) assert.deepEqual(index.labelOf(row.id), { docId: row.doc_id, title: row.title }, `labels of row ${row.id}`);
      assert.ok(termIds.length > SYNTHETIC_WORDS.length, 'words and metadata terms');
      const queries = [...termIds.map((id) => [id]), termIds.slice(0, 3), termIds.slice(2, 10), termIds];
      for (const terms of queries) {
        for (const field of ['all', 'title', 'text', 'metadata'] as SearchField[]) {
          const query = { terms, field, topK: 10 };
          assert.deepEqual(
            index.search({ ...query, filters: [] }),
            expected.search({ ...query, filter: null }),
            `terms ${terms.join(',')} in ${field}`,
          );
        }
      }
    } finally {
      dir.remove();
    }
  });

  it('fails, rather than hand back an empty index, when it cannot read the file', async () => {
    const dir = tempDir();
    try {
      await assert.rejects(loadIndexOnWorker(join(dir.path, 'missing.sqlite'), 100));
    } finally {
      dir.remove();
    }
  });

  it("serves a large corpus's searches from an index loaded that way, in one thread or split over search threads, level with writes made since", async () => {
    const dir = tempDir();
    const writer = new SqliteCorpus(dir.path);
    const loadedHere = new SqliteCorpus(dir.path, { ...INDEX_UPKEEP, workerLoadRows: Number.MAX_SAFE_INTEGER });
    const loadedByWorker = new SqliteCorpus(dir.path, { ...INDEX_UPKEEP, workerLoadRows: 1 });
    const splitByWorker = new SqliteCorpus(dir.path, { ...INDEX_UPKEEP, workerLoadRows: 1, searchThreads: 2, threadedRows: 1 });
    try {
      await corpusWithHistory(dir.path);
      await Promise.all([loadedHere.prepareSearch(), loadedByWorker.prepareSearch(), splitByWorker.prepareSearch()]);
      await writer.ingestDocuments(documentsOf(documents(20, 13, 'late')));
      await writer.deleteDocument('doc-7');
      const requests: IndexQuery[] = [
        { terms: ['river'], field: { kind: 'all' }, filters: [], topK: 20 },
        { terms: ['stone', 'glacier', 'ember'], field: { kind: 'all' }, filters: [{ field: 'shelf', anyOf: ['a'] }], topK: 20 },
        { terms: ['harbour', 'quarry'], field: { kind: 'title' }, filters: [], topK: 20 },
      ];
      for (const request of requests) {
        const expected = await loadedHere.search(request);
        assert.deepEqual(await loadedByWorker.search(request), expected);
        // The same sums in another order where a term is dense in one index and not in the other.
        const split = await splitByWorker.search(request);
        assert.equal(split.total, expected.total);
        assert.deepEqual(
          split.hits.map((hit) => [hit.docId, hit.title]),
          expected.hits.map((hit) => [hit.docId, hit.title]),
        );
        split.hits.forEach((hit, position) => {
          assert.ok(Math.abs(hit.score - expected.hits[position].score) < 1e-9);
        });
      }
      assert.deepEqual(loadedByWorker.indexStatistics(), { liveDocuments: 5016, deletedDocuments: 1, rebuilding: false });
      assert.deepEqual(splitByWorker.indexStatistics(), { liveDocuments: 5016, deletedDocuments: 1, rebuilding: false });
    } finally {
      await writer.close();
      await loadedHere.close();
      await loadedByWorker.close();
      await splitByWorker.close();
      dir.remove();
    }
  });
});
