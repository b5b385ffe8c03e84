import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { corpusMigrations } from '../../src/corpus/corpus-schema.js';
import { INDEX_UPKEEP, SqliteCorpus } from '../../src/corpus/sqlite-corpus.js';
import type { DocumentRecord } from '../../src/documents/document-store.js';
import { StoreUnavailableError } from '../../src/platform/store-faults.js';
import type { IndexQuery } from '../../src/search/document-index.js';
import { assertSameRankings, freshCorpus, INDEX_MODES, rankings } from '../support/corpus-rankings.js';
import { syntheticDocuments as documents, documentsOf, SYNTHETIC_WORDS, tempDir } from '../support/helper.js';

/** Asserts that every hit carries the doc_id and title stored for it now. */
function assertStoredLabels(results: Awaited<ReturnType<typeof rankings>>, stored: DocumentRecord[]): void {
  const titles = new Map(stored.map((document) => [document.docId, document.title]));
  for (const result of results) for (const hit of result.hits) assert.equal(hit.title, titles.get(hit.docId), `title of ${hit.docId}`);
}

/** Resolves once the corpus's background rebuild of its index, if any, has taken over. */
async function rebuilt(corpus: SqliteCorpus): Promise<void> {
  while (corpus.indexStatistics().rebuilding) await new Promise((resolve) => setImmediate(resolve));
}

for (const { name, upkeep } of INDEX_MODES) {
  describe(`SqliteCorpus search index, ${name}`, () => {
    it('keeps matches, totals and scoring statistics exact through re-ingests and deletes', async () => {
      const dir = tempDir();
      const corpus = new SqliteCorpus(dir.path, upkeep);
      try {
        const first = documents(60, 1);
        await corpus.ingestDocuments(documentsOf(first));
        await rankings(corpus);
        const rewritten = documents(20, 2).map((document, index) => ({ ...document, docId: `doc-${index * 2}` }));
        await corpus.ingestDocuments(documentsOf(rewritten));
        for (const docId of ['doc-1', 'doc-3', 'doc-5', 'doc-4']) assert.equal(await corpus.deleteDocument(docId), true);
        await rankings(corpus);
        const added = documents(10, 3, 'new');
        await corpus.ingestDocuments(documentsOf(added));

        const final = new Map(first.map((document) => [document.docId, document]));
        for (const document of rewritten) final.set(document.docId, document);
        for (const docId of ['doc-1', 'doc-3', 'doc-5', 'doc-4']) final.delete(docId);
        for (const document of added) final.set(document.docId, document);
        assertSameRankings(await rankings(corpus), await freshCorpus([...final.values()]));
      } finally {
        await corpus.close();
        dir.remove();
      }
    });

    it("answers each hit with its document's doc_id and title as stored, in any script, through re-ingests", async () => {
      const dir = tempDir();
      const corpus = new SqliteCorpus(dir.path, upkeep);
      const scripts = ['Übersicht', 'Αρχή', '個人情報', 'crab 🦀', ''];
      const labelled = (seed: number) =>
        documents(60, seed).map((document, index) => ({
          ...document,
          docId: `${scripts[index % 5]}-${index}`,
          title: `${scripts[(index + seed) % 5]} ${document.title}`,
        }));
      try {
        await corpus.ingestDocuments(documentsOf(labelled(1)));
        const first = await rankings(corpus);
        assert.ok(first.every((result) => result.hits.length > 0));
        assertStoredLabels(first, labelled(1));
        const reingested = labelled(2).slice(0, 30);
        await corpus.ingestDocuments(documentsOf(reingested));
        assertStoredLabels(await rankings(corpus), [...reingested, ...labelled(1).slice(30)]);
      } finally {
        await corpus.close();
        dir.remove();
      }
    });

    it('applies a replica batch of changes with the same result as ingesting', async () => {
      const dir = tempDir();
      const corpus = new SqliteCorpus(dir.path, upkeep);
      try {
        const first = documents(40, 4);
        corpus.applyChanges(first.map((document) => ({ docId: document.docId, document })));
        await rankings(corpus);
        corpus.applyChanges([
          { docId: 'doc-0', document: null },
          { docId: 'doc-7', document: { ...first[8], docId: 'doc-7' } },
          { docId: 'doc-9', document: null },
        ]);
        const final = first.filter((document) => !['doc-0', 'doc-9'].includes(document.docId));
        final[final.findIndex((document) => document.docId === 'doc-7')] = { ...first[8], docId: 'doc-7' };
        assertSameRankings(await rankings(corpus), await freshCorpus(final));
      } finally {
        await corpus.close();
        dir.remove();
      }
    });

    it('analyses a long ingest on a worker thread with the same result, and rolls all of it back on a bad record', async () => {
      const dir = tempDir();
      const corpus = new SqliteCorpus(dir.path, upkeep);
      try {
        const many = documents(5200, 8).map((document, index) => ({ ...document, title: `${document.title} w${index % 700}` }));
        async function* failingAfter(count: number) {
          yield* many.slice(0, count);
          throw new Error('record 3001: not JSON');
        }
        await assert.rejects(corpus.ingestDocuments(failingAfter(3000)), /record 3001/);
        assert.equal(await corpus.countDocuments(), 0);
        assert.equal(await corpus.ingestDocuments(documentsOf(many)), many.length);
        const reference = tempDir();
        const inThread = new SqliteCorpus(reference.path);
        inThread.applyChanges(many.map((document) => ({ docId: document.docId, document })));
        const expected = await rankings(inThread);
        const unique = await inThread.search({ terms: ['w699'], field: { kind: 'title' }, filters: [], topK: 10 });
        await inThread.close();
        reference.remove();
        assertSameRankings(await rankings(corpus), expected);
        assert.deepEqual(await corpus.search({ terms: ['w699'], field: { kind: 'title' }, filters: [], topK: 10 }), unique);
        assert.equal(unique.total, 7);
      } finally {
        await corpus.close();
        dir.remove();
      }
    });

    it("never shows its own ingest's documents before they are committed", async () => {
      const dir = tempDir();
      const corpus = new SqliteCorpus(dir.path, upkeep);
      try {
        const first = documents(10, 9);
        await corpus.ingestDocuments(documentsOf(first));
        await rankings(corpus);
        await corpus.deleteDocument('doc-0');
        let resume!: () => void;
        const paused = new Promise<void>((resolve) => (resume = resolve));
        let reached!: () => void;
        const halfway = new Promise<void>((resolve) => (reached = resolve));
        async function* interrupted() {
          yield* documents(5, 10, 'pending');
          reached();
          await paused;
          throw new Error('record 6: not JSON');
        }
        const ingest = corpus.ingestDocuments(interrupted());
        await halfway;
        const during = await rankings(corpus);
        assert.ok(
          during.every((result) => result.hits.every((hit) => !hit.docId.startsWith('pending'))),
          'no uncommitted document',
        );
        resume();
        await assert.rejects(ingest, /record 6/);
        assertSameRankings(await rankings(corpus), await freshCorpus(first.slice(1)));
      } finally {
        await corpus.close();
        dir.remove();
      }
    });

    it("drops deleted documents' postings in the background once they pass a quarter of the index, exact all along", async () => {
      const dir = tempDir();
      // Ten rows a step, so that the rebuild takes many turns of the event loop and the corpus changes under it.
      const corpus = new SqliteCorpus(dir.path, { ...upkeep, stepMs: 0, readRows: 10 });
      const turns = async (count: number) => {
        for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
      };
      try {
        const first = documents(200, 12);
        await corpus.ingestDocuments(documentsOf(first));
        assert.deepEqual(corpus.indexStatistics(), { liveDocuments: 200, deletedDocuments: 0, rebuilding: false });
        const rewritten = documents(60, 13).map((document, index) => ({ ...document, docId: `doc-${index}` }));
        await corpus.ingestDocuments(documentsOf(rewritten));
        assert.deepEqual(corpus.indexStatistics(), { liveDocuments: 200, deletedDocuments: 60, rebuilding: false }, '60 of 260: below a quarter');
        const deleted = ['doc-100', 'doc-101', 'doc-102', 'doc-103', 'doc-104', 'doc-105', 'doc-106', 'doc-107', 'doc-108', 'doc-109'];
        for (const docId of deleted) await corpus.deleteDocument(docId);
        assert.deepEqual(corpus.indexStatistics(), { liveDocuments: 190, deletedDocuments: 70, rebuilding: true }, '70 of 260: past a quarter');

        const final = new Map(first.map((document) => [document.docId, document]));
        for (const document of rewritten) final.set(document.docId, document);
        for (const docId of deleted) final.delete(docId);
        await turns(5);
        const late = documents(15, 14, 'late');
        await corpus.ingestDocuments(documentsOf(late));
        for (const document of late) final.set(document.docId, document);
        await turns(5);
        const again = { ...first[150], title: 'ember ember quarry' };
        await corpus.ingestDocuments(documentsOf([again]));
        final.set(again.docId, again);
        await corpus.deleteDocument('doc-5');
        final.delete('doc-5');
        // An ingest of its own held open across turns: the rebuild must not read its uncommitted rows.
        let resume!: () => void;
        const paused = new Promise<void>((resolve) => (resume = resolve));
        async function* interrupted() {
          yield* documents(5, 15, 'pending');
          await paused;
          throw new Error('record 6: not JSON');
        }
        const failing = corpus.ingestDocuments(interrupted());
        await turns(40);
        resume();
        await assert.rejects(failing, /record 6/);
        assert.equal(corpus.indexStatistics().rebuilding, true, 'still rebuilding: the changes above happened under it');
        assertSameRankings(await rankings(corpus), await freshCorpus([...final.values()]));

        await rebuilt(corpus);
        const after = corpus.indexStatistics();
        assert.equal(after.liveDocuments, final.size);
        // What was deleted while it read (doc-150's old version, doc-5) may be marked in the new index
        // as in any other; the 70 from before are gone.
        assert.ok(after.deletedDocuments <= 2, `${after.deletedDocuments} deleted documents left`);
        assertSameRankings(await rankings(corpus), await freshCorpus([...final.values()]));
      } finally {
        await corpus.close();
        dir.remove();
      }
    });

    it("follows another connection's ingests and deletes, and rebuilds when the deletion log was pruned", async () => {
      const dir = tempDir();
      const reader = new SqliteCorpus(dir.path, upkeep);
      const writer = new SqliteCorpus(dir.path);
      try {
        const first = documents(30, 5);
        await writer.ingestDocuments(documentsOf(first));
        assertSameRankings(await rankings(reader), await freshCorpus(first));

        await writer.ingestDocuments(documentsOf(documents(5, 6, 'late')));
        await writer.deleteDocument('doc-2');
        await new Promise((resolve) => setTimeout(resolve, 20));
        const expected = [...first.filter((document) => document.docId !== 'doc-2'), ...documents(5, 6, 'late')];
        assertSameRankings(await rankings(reader), await freshCorpus(expected));

        await writer.deleteDocument('doc-6');
        await writer.deleteDocument('doc-8');
        const raw = new Database(join(dir.path, 'corpus.sqlite'));
        // As if doc-6's entry had aged out of the log before the reader looked: only doc-8's is left.
        raw.prepare('DELETE FROM removed_documents WHERE seq = (SELECT max(seq) - 1 FROM removed_documents)').run();
        raw.close();
        await new Promise((resolve) => setTimeout(resolve, 20));
        // It cannot catch up without doc-6's entry: it serves what it has while a new index is built.
        assert.deepEqual(reader.indexStatistics(), { liveDocuments: 34, deletedDocuments: 1, rebuilding: true });
        await rebuilt(reader);
        const pruned = expected.filter((document) => !['doc-6', 'doc-8'].includes(document.docId));
        assert.deepEqual(reader.indexStatistics(), { liveDocuments: pruned.length, deletedDocuments: 0, rebuilding: false });
        assertSameRankings(await rankings(reader), await freshCorpus(pruned));
      } finally {
        await reader.close();
        await writer.close();
        dir.remove();
      }
    });

    it('builds a new index in the background, rather than catch up, when too much changed since it looked', async () => {
      const dir = tempDir();
      const reader = new SqliteCorpus(dir.path, { ...upkeep, catchUpLimit: 20, stepMs: 0, readRows: 10 });
      const writer = new SqliteCorpus(dir.path);
      try {
        const first = documents(40, 16);
        await writer.ingestDocuments(documentsOf(first));
        await rankings(reader);
        await writer.ingestDocuments(documentsOf(documents(8, 17, 'small')));
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.deepEqual(reader.indexStatistics(), { liveDocuments: 48, deletedDocuments: 0, rebuilding: false }, '8 changes: caught up at once');

        const asLastSeen = await freshCorpus([...first, ...documents(8, 17, 'small')]);
        const rewritten = documents(25, 18).map((document, index) => ({ ...document, docId: `doc-${index}` }));
        await writer.ingestDocuments(documentsOf(rewritten));
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.deepEqual(reader.indexStatistics(), { liveDocuments: 48, deletedDocuments: 0, rebuilding: true }, '50 changes: served as it was');
        const whileRebuilding = await rankings(reader);
        assert.deepEqual(
          whileRebuilding.map((result) => result.total),
          asLastSeen.map((result) => result.total),
          'totals as the index last saw the corpus',
        );
        const final = [...rewritten, ...first.slice(25), ...documents(8, 17, 'small')];
        // The index serving meanwhile still holds the rewritten documents' old rows: those hits are dropped, not shown with old titles.
        assertStoredLabels(whileRebuilding, final);
        await rebuilt(reader);
        assert.deepEqual(reader.indexStatistics(), { liveDocuments: 48, deletedDocuments: 0, rebuilding: false });
        assertSameRankings(await rankings(reader), await freshCorpus(final));
      } finally {
        await reader.close();
        await writer.close();
        dir.remove();
      }
    });
  });
}

describe('SqliteCorpus search threads', () => {
  it('is unavailable (503) while a search thread is gone, then builds the index anew on new threads', async () => {
    const dir = tempDir();
    const corpus = new SqliteCorpus(dir.path, { ...INDEX_UPKEEP, searchThreads: 2, threadedRows: 0 });
    try {
      const all = documents(80, 21);
      await corpus.ingestDocuments(documentsOf(all));
      const before = await rankings(corpus);
      const threads = (corpus as unknown as { keeper: { searchThreads: { threads: Array<{ worker: { terminate(): Promise<number> } }> } } }).keeper
        .searchThreads;
      await threads.threads[1].worker.terminate();
      await assert.rejects(rankings(corpus), (error: Error) => error instanceof StoreUnavailableError && /search thread/.test(String(error.cause)));
      assertSameRankings(await rankings(corpus), before);
      assertSameRankings(before, await freshCorpus(all));
    } finally {
      await corpus.close();
      dir.remove();
    }
  });
});

describe('SqliteCorpus searches in flight together', () => {
  it("ranks and counts them on two search threads as one index does, the thread behind starting from the other's best scores", async () => {
    // Shares past DENSE_MINIMUM_DOCUMENTS, with common words (dense), and rarer ones in the titles.
    // An ingest's documents go to one thread (a catch-up batch each), so two ingests make two
    // shares, of unequal sizes: the thread with the smaller one runs ahead.
    const all = documents(10_500, 29).map((document, index) => ({ ...document, title: `${document.title} w${index % 900} v${index % 97}` }));
    const dirs = [tempDir(), tempDir()];
    const threaded = new SqliteCorpus(dirs[0].path, { ...INDEX_UPKEEP, searchThreads: 2, threadedRows: 0 });
    const single = new SqliteCorpus(dirs[1].path);
    try {
      for (const part of [all.slice(0, 6000), all.slice(6000)]) {
        await threaded.ingestDocuments(documentsOf(part));
        await threaded.search({ terms: ['river'], field: { kind: 'all' }, filters: [], topK: 1 });
      }
      await single.ingestDocuments(documentsOf(all));
      const words = (seed: number) => [SYNTHETIC_WORDS[seed % 12], SYNTHETIC_WORDS[(seed * 7 + 3) % 12]];
      const requests: IndexQuery[] = Array.from({ length: 120 }, (_, index) => ({
        terms: index % 3 === 0 ? words(index) : index % 3 === 1 ? [...words(index), `w${(index * 37) % 900}`] : [`v${index % 97}`, words(index)[0]],
        field: { kind: 'all' },
        filters: [],
        topK: 1 + (index % 15),
      }));
      // All sent at once, so that the threads' queues hold many searches and one runs ahead.
      const results = await Promise.all(requests.map((request) => threaded.search(request)));
      for (const [index, request] of requests.entries()) {
        const expected = await single.search(request);
        assert.equal(results[index].total, expected.total, `search ${index}: total`);
        assert.deepEqual(
          results[index].hits.map((hit) => hit.docId),
          expected.hits.map((hit) => hit.docId),
          `search ${index}: ranking`,
        );
        results[index].hits.forEach((hit, position) => {
          assert.ok(Math.abs(hit.score - expected.hits[position].score) < 1e-9, `search ${index}: score`);
        });
      }
    } finally {
      await threaded.close();
      await single.close();
      for (const dir of dirs) dir.remove();
    }
  });
});

describe('SqliteCorpus files', () => {
  it('analyses a corpus again when the analyser changed: compounds become searchable joined, rankings as fresh', async () => {
    const dir = tempDir();
    const originals = [...documents(25, 11), { docId: 'cytokine', title: 'IL-6 signalling', text: 'HIV/AIDS and IL-6', metadata: {} }];
    const written = new SqliteCorpus(dir.path);
    await written.ingestDocuments(documentsOf(originals));
    await written.close();
    // What the previous analyser left: vectors without the joined terms (here: none at all).
    const old = new Database(join(dir.path, 'corpus.sqlite'));
    old.exec(`UPDATE documents SET terms = x'', title_length = 0, text_length = 0`);
    // and without what later migrations added.
    old.exec(
      'DROP INDEX documents_embedding_keys; DROP TABLE embeddings; DROP TABLE corpus_analysis; ALTER TABLE documents DROP COLUMN embedding_key;',
    );
    old.pragma('user_version = 2');
    await old.close();
    const corpus = new SqliteCorpus(dir.path);
    try {
      const found = await corpus.search({ terms: ['il6', 'hivaids'], field: { kind: 'all' }, filters: [], topK: 5 });
      assert.deepEqual(
        found.hits.map((hit) => hit.docId),
        ['cytokine'],
      );
      assertSameRankings(await rankings(corpus), await freshCorpus(originals));
    } finally {
      await corpus.close();
      dir.remove();
    }
  });

  it('writes a new corpus in 16 KiB pages and keeps the page size of an existing one', async () => {
    const pageSize = (path: string) => {
      const db = new Database(path, { readonly: true });
      try {
        return db.pragma('page_size', { simple: true });
      } finally {
        db.close();
      }
    };
    const fresh = tempDir();
    const existing = tempDir();
    try {
      const corpus = new SqliteCorpus(fresh.path);
      await corpus.ingestDocuments(documentsOf(documents(40, 3)));
      await corpus.close();
      assert.equal(pageSize(join(fresh.path, 'corpus.sqlite')), 16_384);

      const older = new Database(join(existing.path, 'corpus.sqlite'));
      older.pragma('page_size = 4096');
      older.exec('CREATE TABLE placeholder (x)');
      await older.close();
      const upgraded = new SqliteCorpus(existing.path);
      await upgraded.ingestDocuments(documentsOf(documents(40, 3)));
      assert.equal((await upgraded.getDocument('doc-7'))?.docId, 'doc-7');
      await upgraded.close();
      assert.equal(pageSize(join(existing.path, 'corpus.sqlite')), 4096);
    } finally {
      fresh.remove();
      existing.remove();
    }
  });

  it('upgrades a corpus written before the index was its own: documents kept, analysed once, searchable', async () => {
    const dir = tempDir();
    const old = new Database(join(dir.path, 'corpus.sqlite'));
    old.exec(corpusMigrations[0]);
    old.pragma('user_version = 1');
    const originals = documents(25, 7);
    const insertDocument = old.prepare('INSERT INTO documents (doc_id, title, text, metadata) VALUES (?, ?, ?, ?)');
    const insertField = old.prepare(`INSERT INTO doc_fields (doc_rowid, field, vtype, value) VALUES (?, ?, 's', ?)`);
    for (const document of originals) {
      const rowid = insertDocument.run(document.docId, document.title, document.text, JSON.stringify(document.metadata)).lastInsertRowid;
      insertField.run(rowid, 'shelf', document.metadata.shelf);
    }
    await old.close();
    const corpus = new SqliteCorpus(dir.path);
    try {
      assert.equal(await corpus.countDocuments(), originals.length);
      assert.deepEqual(await corpus.getDocument('doc-3'), originals[3]);
      assertSameRankings(await rankings(corpus), await freshCorpus(originals));
    } finally {
      await corpus.close();
      dir.remove();
    }
  });
});

describe('SqliteCorpus with operator and and exclusions', () => {
  it('ranks and counts them on two search threads as one index does', async () => {
    const all = documents(3000, 31);
    const dirs = [tempDir(), tempDir()];
    const threaded = new SqliteCorpus(dirs[0].path, { ...INDEX_UPKEEP, searchThreads: 2, threadedRows: 0 });
    const single = new SqliteCorpus(dirs[1].path);
    try {
      for (const part of [all.slice(0, 1800), all.slice(1800)]) await threaded.ingestDocuments(documentsOf(part));
      await single.ingestDocuments(documentsOf(all));
      const word = (seed: number) => SYNTHETIC_WORDS[seed % SYNTHETIC_WORDS.length] as string;
      for (let index = 0; index < 40; index++) {
        const request: IndexQuery = {
          terms: [word(index), word(index * 5 + 1)],
          field: { kind: 'all' },
          filters: [],
          topK: 10,
          ...(index % 2 === 0 ? { operator: 'and' as const } : {}),
          ...(index % 3 !== 0 ? { excluded: [word(index * 3 + 2)] } : {}),
        };
        const [expected, actual] = [await single.search(request), await threaded.search(request)];
        assert.equal(actual.total, expected.total, `search ${index}: total`);
        assert.deepEqual(
          actual.hits.map((hit) => hit.docId),
          expected.hits.map((hit) => hit.docId),
          `search ${index}: hits`,
        );
        const plain = await single.search({ ...request, operator: undefined, excluded: undefined, topK: 3000 });
        assert.ok(actual.total <= plain.total, 'and and exclusions only narrow the matches');
      }
    } finally {
      await threaded.close();
      await single.close();
      for (const dir of dirs) dir.remove();
    }
  });
});
