import { join } from 'node:path';
import type Database from 'better-sqlite3';
import type { DocumentRecord, IngestProgress } from '../documents/document-store.js';
import { ExternalWrites } from '../platform/external-writes.js';
import { collectThenRelease, releaseAfterNextCollection, releaseFreedMemory } from '../platform/release-memory.js';
import { openSqlite } from '../platform/sqlite-open.js';
import { StoreUnavailableError } from '../platform/store-faults.js';
import { migrateCorpus } from '../store/sqlite-schema.js';
import type { SearchRequest, SearchResult } from './document-index.js';
import { stemOf } from './engine/analysis.js';
import { BackgroundAnalyser } from './engine/background-analyser.js';
import { FilterBitmaps } from './engine/filter-bitmaps.js';
import type { SearchField } from './engine/search-index.js';
import { SearchThreads } from './engine/search-threads.js';
import { ShardedIndex } from './engine/sharded-index.js';
import { type AnalysedDocument, DocumentAnalyser, filterTerm, metadataWordTerm, TermDictionary } from './engine/term-vector.js';
import { TextIndex } from './engine/text-index.js';
import { indexBatches, loadIndexOnWorker, loadShardedOnWorker, STORED_DOCUMENT_COLUMNS, type StoredDocument } from './index-loader.js';

const DOCUMENT_CACHE_CHARS = 32 * 1024 * 1024;
/** An ingest analyses this many documents itself before handing analysis to a worker thread. */
const IN_THREAD_DOCUMENTS = 2000;
/** Documents per message to and from the analysis worker. */
const BACKGROUND_BATCH = 500;
/** Batches queued for the analysis worker before this thread writes or analyses one itself. */
const WORKER_BACKLOG = 3;
/**
 * Deleted documents' postings, as a share of every document the index holds, past which the index
 * is built again without them, in the background. A deletion (and the old version of every
 * re-ingested document) only marks its postings skipped: a corpus re-ingested nightly would
 * otherwise hold one more copy of itself in memory every night until a restart, and every search
 * would step over the dead postings. A quarter keeps the waste below a third of the live index.
 */
const COMPACT_DELETED_SHARE = 0.25;

/** How the index is kept: see INDEX_UPKEEP. */
export interface IndexUpkeep {
  /**
   * Documents added and deleted since the index last looked, past which it is not caught up but
   * built anew in the background while it serves as it is: catching up holds the event loop for
   * every document.
   */
  catchUpLimit: number;
  /** A background rebuild reads `readRows` documents at a time for up to `stepMs`, then requests get their turn. */
  stepMs: number;
  readRows: number;
  /**
   * Row ids from which prepareSearch loads the index with a worker thread reading and decoding the
   * rows: below, starting the worker costs more than it saves.
   */
  workerLoadRows: number;
  /** Threads a large corpus's index is split over (a ShardedIndex), so that searches use that many cores; 1: none. */
  searchThreads: number;
  /** Row ids in the file from which a new index is split over the search threads. */
  threadedRows: number;
  /**
   * For a split index, a background rebuild's step reads at most this many rows, and is taken only
   * once the threads have added the previous one: a search waits behind one step at most.
   */
  threadStepRows: number;
  /** Terms' postings a search thread appends (or lists it trims) between messages: see search-thread.ts. */
  threadSliceTerms: number;
  /**
   * Documents handed to the index at a time while it loads or catches up. A split index gives each
   * batch whole to the next thread in turn (see ShardedIndex), so fewer documents than this added
   * at once all go to one thread.
   */
  indexBatchRows: number;
}
/**
 * 20,000 documents take 0.5-1 s to catch up with at a million; 250 rows about 6 ms. Below 50,000
 * documents a search takes well under a millisecond in this thread, and messages to threads
 * would cost more than they save. A search thread adds 500 documents to a large index in about
 * 35 ms on session 13's machine (most of it one cache miss per term's list, whatever the batch's
 * size); with steps of 10 ms of reading (a few thousand rows), four queued per thread, searches
 * during a rebuild at a million documents waited 225 ms at the median (bench:refresh, session 13).
 */
export const INDEX_UPKEEP: IndexUpkeep = {
  catchUpLimit: 20_000,
  stepMs: 10,
  readRows: 250,
  workerLoadRows: 50_000,
  searchThreads: 1,
  threadedRows: 50_000,
  threadStepRows: 500,
  /** A millisecond or two at a million documents. */
  threadSliceTerms: 2000,
  indexBatchRows: 10_000,
};
/** Filter bitmaps kept for reuse until the corpus changes. */
const FILTER_CACHE_ENTRIES = 32;
/**
 * How long deletions stay in the log other processes follow. A process that has not looked for
 * longer than this rebuilds its index rather than miss one.
 */
const REMOVAL_LOG_SECONDS = 3600;

/**
 * Pages of a new corpus file: a stored document (text and term vector) is a few kilobytes, so with
 * SQLite's default 4 KiB most rows spill onto overflow pages. Measured on 300,000 synthetic documents:
 * 16% smaller file, half the system time of an ingest (fewer, larger WAL writes), the ingest and its
 * checkpoint 15-25% sooner.
 */
const CORPUS_PAGE_SIZE = 16_384;

/** A change to apply to a replica: the new version of a document, or its removal. */
export type DocumentChange = { docId: string; document: DocumentRecord | null };

/**
 * The corpus in one SQLite file: documents with their term vectors (metadata values included),
 * the term dictionary, and a log of deletions. Search and filters run on an in-memory TextIndex
 * built from the term vectors, loaded on first use and brought up to date from the file whenever
 * it changed. The embedded store's corpus, and each PostgreSQL-backed instance's local search
 * replica.
 */
export class SqliteCorpus {
  private readonly db: Database.Database;
  private readonly path: string;
  /**
   * Documents as /document's JSON by id (unknown ids as null), least recently used first out past
   * DOCUMENT_CACHE_CHARS; dropped whenever another connection commits to the file.
   */
  private readonly documentCache = new Map<string, string | null>();
  private documentCacheChars = 0;
  private readonly externalWrites: ExternalWrites;
  private readonly sql;
  private dictionary = new TermDictionary();
  private analyser = new DocumentAnalyser(this.dictionary);
  private index: TextIndex | ShardedIndex | undefined;
  private indexStale = false;
  private removalsSeen = 0;
  /** For an index in this thread; search threads keep their own. */
  private readonly filterBitmaps = new FilterBitmaps(FILTER_CACHE_ENTRIES);
  /** The threads of any ShardedIndex, started with the first one (see newIndex). */
  private searchThreads: SearchThreads | undefined;
  /** The index being built anew in the background, while one is (see rebuild). */
  private rebuilding: Promise<void> | undefined;
  private closed = false;

  constructor(
    dir: string,
    private readonly upkeep = INDEX_UPKEEP,
  ) {
    this.path = join(dir, 'corpus.sqlite');
    this.db = openSqlite(this.path, { pageSize: CORPUS_PAGE_SIZE });
    migrateCorpus(this.db);
    this.externalWrites = new ExternalWrites(this.db, dir, 'corpus.sqlite');
    const c = this.db;
    this.sql = {
      document: c.prepare('SELECT doc_id, title, text, metadata FROM documents WHERE doc_id = ?'),
      deleteDocument: c.prepare('DELETE FROM documents WHERE doc_id = ?'),
      insertDocument: c.prepare(
        'INSERT INTO documents (doc_id, title, text, metadata, title_length, text_length, terms) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      insertTerm: c.prepare('INSERT INTO terms (id, term) VALUES (?, ?)'),
      countDocuments: c.prepare('SELECT count(*) AS n FROM documents'),
      termsAfter: c.prepare('SELECT id, term FROM terms WHERE id > ?'),
      documentsAfter: c.prepare(`SELECT ${STORED_DOCUMENT_COLUMNS} FROM documents WHERE id > ? ORDER BY id`),
      documentsFrom: c.prepare(`SELECT ${STORED_DOCUMENT_COLUMNS} FROM documents WHERE id > ? ORDER BY id LIMIT ?`),
      removalsAfter: c.prepare('SELECT seq, doc_rowid, terms FROM removed_documents WHERE seq > ? ORDER BY seq'),
      removalsFrom: c.prepare('SELECT seq, doc_rowid, terms FROM removed_documents WHERE seq > ? ORDER BY seq LIMIT ?'),
      lastRemoval: c.prepare('SELECT coalesce(max(seq), 0) FROM removed_documents').pluck(),
      lastRowid: c.prepare('SELECT coalesce(max(id), 0) FROM documents').pluck(),
      pruneRemovals: c.prepare('DELETE FROM removed_documents WHERE removed_at < unixepoch() - ?'),
      hit: c.prepare('SELECT doc_id, title FROM documents WHERE id = ?'),
      unanalysed: c.prepare('SELECT id, title, text, metadata FROM documents WHERE terms IS NULL AND id > ? ORDER BY id LIMIT 1000'),
      setTerms: c.prepare('UPDATE documents SET title_length = ?, text_length = ?, terms = ? WHERE id = ?'),
    };
    this.analyseOlderDocuments();
  }

  /**
   * Documents written before term vectors existed, or by an older analyser, get theirs once, on
   * the first open; read a thousand at a time so that a large corpus is never all in memory.
   */
  private analyseOlderDocuments(): void {
    if (!this.db.prepare('SELECT 1 FROM documents WHERE terms IS NULL LIMIT 1').get()) return;
    this.write(() => {
      let after = 0;
      for (;;) {
        const rows = this.sql.unanalysed.all(after) as Array<{ id: number; title: string; text: string; metadata: string }>;
        if (rows.length === 0) break;
        for (const row of rows) {
          const analysed = this.analyser.analyse(row.title, row.text, JSON.parse(row.metadata));
          this.sql.setTerms.run(analysed.titleLength, analysed.textLength, analysed.terms, row.id);
        }
        after = rows.at(-1)!.id;
      }
    });
  }

  /**
   * Write transactions: immediate, with the term dictionary brought up to date first; the terms a
   * transaction adds are written in it, and forgotten if it fails.
   */
  private beginWrite(): void {
    this.dropDocumentCache();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      this.dictionary.load(this.sql.termsAfter.all(this.dictionary.highestId) as Array<{ id: number; term: string }>);
    } catch (error) {
      this.rollbackWrite();
      throw error;
    }
  }

  private commitWrite(): void {
    for (const [id, term] of this.dictionary.added) this.sql.insertTerm.run(id, term);
    this.dictionary.added.length = 0;
    this.sql.pruneRemovals.run(REMOVAL_LOG_SECONDS);
    this.db.exec('COMMIT');
    this.dropDocumentCache();
    this.indexStale = true;
  }

  private rollbackWrite(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.dictionary = new TermDictionary();
    this.analyser = new DocumentAnalyser(this.dictionary);
    this.dropDocumentCache();
    this.indexStale = true;
  }

  private write(work: () => void): void {
    this.beginWrite();
    try {
      work();
      this.commitWrite();
    } catch (error) {
      this.rollbackWrite();
      throw error;
    }
  }

  private noticeExternalWrites(): void {
    if (this.externalWrites.happened()) {
      this.dropDocumentCache();
      this.indexStale = true;
    }
  }

  async getDocumentJson(docId: string): Promise<string | undefined> {
    this.noticeExternalWrites();
    const cached = this.documentCache.get(docId);
    if (cached !== undefined) {
      this.documentCache.delete(docId);
      this.documentCache.set(docId, cached);
      return cached ?? undefined;
    }
    const row = this.sql.document.get(docId) as { doc_id: string; title: string; text: string; metadata: string } | undefined;
    let json: string | null = null;
    if (row) {
      const core = `{"doc_id":${JSON.stringify(row.doc_id)},"title":${JSON.stringify(row.title)},"text":${JSON.stringify(row.text)}`;
      json = row.metadata === '{}' ? `${core}}` : `${core},${row.metadata.slice(1)}`;
    }
    this.cacheDocument(docId, json);
    return json ?? undefined;
  }

  /** Unknown ids are cached too (as null), so probing for missing documents costs no more reads. */
  private cacheDocument(docId: string, json: string | null): void {
    this.documentCache.set(docId, json);
    this.documentCacheChars += docId.length + (json?.length ?? 0);
    for (const [oldest, value] of this.documentCache) {
      if (this.documentCacheChars <= DOCUMENT_CACHE_CHARS) break;
      this.documentCache.delete(oldest);
      this.documentCacheChars -= oldest.length + (value?.length ?? 0);
    }
  }

  private dropDocumentCache(): void {
    this.documentCache.clear();
    this.documentCacheChars = 0;
  }

  async getDocument(docId: string): Promise<DocumentRecord | undefined> {
    const row = this.sql.document.get(docId) as { doc_id: string; title: string; text: string; metadata: string } | undefined;
    return row && { docId: row.doc_id, title: row.title, text: row.text, metadata: JSON.parse(row.metadata) };
  }

  async ingestDocuments(source: AsyncIterable<DocumentRecord>, onProgress?: (progress: IngestProgress) => void): Promise<number> {
    // One transaction across the whole source: a bad record anywhere leaves the corpus untouched.
    // Past the first few thousand documents, analysis moves to a worker thread (see
    // BackgroundAnalyser): batches are analysed there while the next one is read here and earlier
    // ones written, in source order. When the worker falls behind, this thread analyses a batch
    // itself if it holds no term the dictionary lacks (the worker alone adds terms).
    this.beginWrite();
    // No checkpoint inside the commit: copying a million documents' WAL into the file takes as long
    // as a third of the ingest, and the documents are durable (and searchable) without it. It happens
    // when this connection closes, or in the service's checkpoint thread, or at a later commit.
    const autocheckpoint = this.db.pragma('wal_autocheckpoint', { simple: true }) as number;
    this.db.pragma('wal_autocheckpoint = 0');
    let count = 0;
    let background: BackgroundAnalyser | undefined;
    let batch: DocumentRecord[] = [];
    const queue: Array<{ documents: DocumentRecord[]; vectors: Promise<AnalysedDocument[]> }> = [];
    const progress = (written: number) => {
      const before = count;
      count += written;
      if (onProgress && Math.floor(count / 1000) > Math.floor(before / 1000)) onProgress({ documents: count });
    };
    const writeOldest = async () => {
      const { documents, vectors } = queue.shift()!;
      const analysed = await vectors;
      documents.forEach((document, index) => {
        this.insertDocument(document, analysed[index]);
      });
      progress(documents.length);
    };
    const send = async () => {
      const documents = batch;
      batch = [];
      const vectors = background!.backlog >= WORKER_BACKLOG ? this.analyseSharing(documents, background!) : background!.analyse(documents);
      vectors.catch(() => undefined);
      queue.push({ documents, vectors });
      while (queue.length > WORKER_BACKLOG) await writeOldest();
    };
    try {
      for await (const document of source) {
        if (background) {
          batch.push(document);
          if (batch.length === BACKGROUND_BATCH) await send();
          continue;
        }
        this.writeDocument(document);
        progress(1);
        if (count === IN_THREAD_DOCUMENTS) background = new BackgroundAnalyser(this.dictionary);
      }
      if (batch.length > 0) await send();
      while (queue.length > 0) await writeOldest();
      this.commitWrite();
    } catch (error) {
      this.rollbackWrite();
      throw error;
    } finally {
      this.db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
      await background?.close();
    }
    onProgress?.({ documents: count });
    return count;
  }

  /**
   * Term vectors for a batch, analysed here where the dictionary holds every term of a document,
   * by the worker for the others.
   */
  private async analyseSharing(documents: DocumentRecord[], background: BackgroundAnalyser): Promise<AnalysedDocument[]> {
    const vectors = documents.map((document) => this.analyser.analyseKnown(document.title, document.text, document.metadata));
    const missing = documents.filter((_, index) => vectors[index] === null);
    if (missing.length > 0) {
      const fromWorker = await background.analyse(missing);
      let next = 0;
      vectors.forEach((vector, index) => {
        if (vector === null) vectors[index] = fromWorker[next++];
      });
    }
    return vectors as AnalysedDocument[];
  }

  private writeDocument(document: DocumentRecord): void {
    this.insertDocument(document, this.analyser.analyse(document.title, document.text, document.metadata));
  }

  private insertDocument(document: DocumentRecord, analysed: AnalysedDocument): void {
    this.sql.deleteDocument.run(document.docId);
    this.sql.insertDocument.run(
      document.docId,
      document.title,
      document.text,
      JSON.stringify(document.metadata),
      analysed.titleLength,
      analysed.textLength,
      analysed.terms,
    );
  }

  async deleteDocument(docId: string): Promise<boolean> {
    let deleted = false;
    this.write(() => {
      deleted = this.sql.deleteDocument.run(docId).changes > 0;
    });
    return deleted;
  }

  async countDocuments(): Promise<number> {
    return (this.sql.countDocuments.get() as { n: number }).n;
  }

  /**
   * Loads the search index now rather than on the first query; for a large corpus, with a worker
   * thread reading and decoding the rows. Should that fail, the index is loaded here.
   */
  async prepareSearch(): Promise<void> {
    if (!this.index && (this.sql.lastRowid.get() as number) >= this.upkeep.workerLoadRows) {
      const loaded = await this.loadOnWorker().catch(() => undefined);
      if (loaded && !this.index && !this.closed) {
        const seen = this.catchUp(loaded.index, loaded.removalsSeen);
        if (seen !== undefined) {
          loaded.index.trim();
          this.serve(loaded.index, seen);
        }
      }
      if (loaded && loaded.index !== this.index && loaded.index instanceof ShardedIndex) loaded.index.drop();
    }
    if (this.closed) return;
    const index = this.currentIndex();
    // The threads collect what their loads freed after their trims (see search-thread.ts), and
    // release it once swept; this thread does the same here, while nothing is served yet. A small
    // index leaves too little behind to be worth the second's wait.
    if (index instanceof ShardedIndex) await index.settled();
    if (index.liveDocuments >= this.upkeep.workerLoadRows) await collectThenRelease();
    else releaseFreedMemory();
  }

  private loadOnWorker(): Promise<{ index: TextIndex | ShardedIndex; removalsSeen: number }> {
    if (!this.threadedIndexDue()) return loadIndexOnWorker(this.path, this.upkeep.indexBatchRows);
    const index = this.newShardedIndex();
    return loadShardedOnWorker(this.path, this.upkeep.indexBatchRows, index).catch((error: unknown) => {
      index.drop();
      throw error;
    });
  }

  async search(request: SearchRequest): Promise<SearchResult> {
    const index = this.currentIndex();
    const field = request.field;
    const termIds = new Set<number>();
    for (const term of request.terms) {
      const stem = stemOf(term);
      const id = this.dictionary.idOf(field.kind === 'metadata' ? metadataWordTerm(field.name, stem) : stem);
      if (id !== undefined) termIds.add(id);
    }
    if (termIds.size === 0) return { total: 0, hits: [] };
    const query = { terms: [...termIds], field: field.kind satisfies SearchField, filters: this.filterTermIds(request.filters), topK: request.topK };
    // An index level with the file answers from the doc_ids and titles it holds. A row can be gone
    // while this connection's own transaction holds the index back, or while a new index is built
    // in the background and the old one serves: then each hit's row is read, and a hit without one
    // dropped.
    const level = !this.db.inTransaction && this.rebuilding === undefined;
    const result =
      index instanceof TextIndex
        ? index.search({ ...query, filter: this.filterBitmaps.of(index, query.filters) })
        : await this.searchThreaded(index, query);
    const hits: Array<{ docId: string; title: string; score: number }> = [];
    for (const hit of result.hits) {
      const label = (level && index.labelOf(hit.rowid)) || this.readLabel(hit.rowid);
      if (label) hits.push({ docId: label.docId, title: label.title, score: hit.score });
    }
    // Equal scores in doc_id order, as before the index was our own.
    hits.sort((a, b) => b.score - a.score || (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0));
    return { total: result.total, hits: hits.slice(0, request.topK) };
  }

  private readLabel(rowid: number): { docId: string; title: string } | undefined {
    const row = this.sql.hit.get(rowid) as { doc_id: string; title: string } | undefined;
    return row && { docId: row.doc_id, title: row.title };
  }

  /**
   * The index, brought up to date with every commit to the file first; or, while one is rebuilt in
   * the background because that was too much to catch up with, as it was.
   */
  private currentIndex(): TextIndex | ShardedIndex {
    this.noticeExternalWrites();
    // Inside this connection's own ingest, reads would see its uncommitted documents: the index
    // catches up once the transaction has ended.
    if (this.index && this.db.inTransaction) return this.index;
    if (!this.index) {
      const index = this.newIndex();
      const seen = this.catchUp(index, undefined)!;
      index.trim();
      this.serve(index, seen);
    } else if (this.indexStale) {
      this.bringLevel(this.index);
    }
    const index = this.index!;
    if (index.deletedDocuments > COMPACT_DELETED_SHARE * (index.liveDocuments + index.deletedDocuments)) this.rebuildInBackground();
    return index;
  }

  /** The documents the search index holds, live and deleted (postings not dropped yet), and whether a new one is being built. */
  indexStatistics(): { liveDocuments: number; deletedDocuments: number; rebuilding: boolean } {
    const index = this.currentIndex();
    return { liveDocuments: index.liveDocuments, deletedDocuments: index.deletedDocuments, rebuilding: this.rebuilding !== undefined };
  }

  /**
   * Catches the serving index up with the file, unless that is more than catchUpLimit changes or
   * the deletion log no longer reaches back to where it last looked: then it serves as it is
   * while a new one is built in the background.
   */
  private bringLevel(index: TextIndex | ShardedIndex): void {
    const liveBefore = index.liveDocuments;
    const seen = this.changesSince(index, this.removalsSeen) <= this.upkeep.catchUpLimit ? this.catchUp(index, this.removalsSeen) : undefined;
    if (seen === undefined) {
      this.rebuildInBackground();
      return;
    }
    // Posting lists grow by doubling; after a load that grew the index by a tenth or more, the
    // slack is given back (a bulk ingest followed while running would otherwise keep up to half).
    if (index.liveDocuments >= liveBefore * 1.1) {
      index.trim();
      releaseAfterNextCollection();
    }
    this.serve(index, seen);
  }

  /** Documents written and deleted since `index` last looked, at most (two lookups, whatever the number). */
  private changesSince(index: TextIndex | ShardedIndex, removalsSeen: number): number {
    return Math.max(0, (this.sql.lastRowid.get() as number) - index.highestRowid) + (this.sql.lastRemoval.get() as number) - removalsSeen;
  }

  private serve(index: TextIndex | ShardedIndex, removalsSeen: number): void {
    if (this.index instanceof ShardedIndex && this.index !== index) this.index.drop();
    this.index = index;
    this.removalsSeen = removalsSeen;
    this.indexStale = false;
    this.filterBitmaps.clear();
  }

  /**
   * An empty index: split over search threads when they are configured and the file holds
   * threadedRows row ids or more, else in this thread.
   */
  private newIndex(): TextIndex | ShardedIndex {
    return this.threadedIndexDue() ? this.newShardedIndex() : new TextIndex();
  }

  /**
   * An empty index to replace the serving one, with room for as many doc_ids and titles as that one
   * holds: most rebuilds follow a re-ingest of much the same corpus.
   */
  private replacementIndex(): TextIndex | ShardedIndex {
    const index = this.newIndex();
    if (this.index) index.expectLabels(this.index.liveDocuments, this.index.labelBytes);
    return index;
  }

  /** An empty ShardedIndex, on new threads if those there were have failed. */
  private newShardedIndex(): ShardedIndex {
    if (this.searchThreads?.failed) {
      void this.searchThreads.close();
      this.searchThreads = undefined;
    }
    this.searchThreads ??= new SearchThreads(this.upkeep.searchThreads, this.upkeep.threadSliceTerms);
    return new ShardedIndex(this.searchThreads);
  }

  private threadedIndexDue(): boolean {
    return this.upkeep.searchThreads > 1 && (this.sql.lastRowid.get() as number) >= this.upkeep.threadedRows;
  }

  /**
   * A search on the threads. Should one of them have failed, this search is unavailable (503, to be
   * retried) and the next one builds the index anew on new threads.
   */
  private async searchThreaded(index: ShardedIndex, query: Parameters<ShardedIndex['search']>[0]) {
    try {
      return await index.search(query);
    } catch (error) {
      if (this.index === index) this.index = undefined;
      throw new StoreUnavailableError({ cause: error });
    }
  }

  /**
   * Adds the documents above the index's highest row id and applies the deletions logged after
   * `removalsSeen` (for an index read from the start, undefined: none), all from one read
   * snapshot. Returns the last deletion seen, or undefined when the log no longer reaches back to
   * `removalsSeen`, and the index cannot be brought level.
   */
  private catchUp(index: TextIndex | ShardedIndex, removalsSeen: number | undefined): number | undefined {
    return this.db.transaction((): number | undefined => {
      this.dictionary.load(this.sql.termsAfter.all(this.dictionary.highestId) as Array<{ id: number; term: string }>);
      if (removalsSeen === undefined) {
        const seen = this.sql.lastRemoval.get() as number;
        this.addDocuments(index, this.sql.documentsAfter.iterate(index.highestRowid) as Iterable<StoredDocument>);
        return seen;
      }
      const removals = this.sql.removalsAfter.all(removalsSeen) as LoggedRemoval[];
      if (!followsOn(removals, removalsSeen)) return undefined;
      this.addDocuments(index, this.sql.documentsAfter.iterate(index.highestRowid) as Iterable<StoredDocument>);
      return applyRemovals(index, removals, removalsSeen);
    })();
  }

  private addDocuments(index: TextIndex | ShardedIndex, rows: Iterable<StoredDocument>): void {
    for (const { documents, labels } of indexBatches(rows, this.upkeep.indexBatchRows)) index.add(documents, labels);
  }

  private rebuildInBackground(): void {
    if (this.rebuilding) return;
    // A failed rebuild leaves the serving index as it was; the next search tries again.
    this.rebuilding = this.rebuild()
      .catch(() => undefined)
      .finally(() => (this.rebuilding = undefined));
  }

  /**
   * Builds the index anew from the file, without deleted documents, while the current one serves:
   * a few milliseconds of work at a time, each in a read transaction of its own, never inside this
   * connection's own write. A step applies deletions logged since the rebuild began, then reads
   * documents in row id order. A row deleted after it was read is in the log; one deleted before is
   * not read; one written meanwhile has a higher row id than any read. So once a step finds
   * nothing left to read, a last catch-up (as any index catches up) leaves it level with the file,
   * and it takes over.
   */
  private async rebuild(): Promise<void> {
    let index = this.replacementIndex();
    let removalsSeen: number | undefined;
    try {
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.closed) return;
        if (this.db.inTransaction) continue;
        // A step hands its documents to a search thread, and a search waits for every thread: one
        // step at a time, so that a search waits behind one step at most, as on the event loop.
        if (index instanceof ShardedIndex && !index.threadsIdle) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          continue;
        }
        const started = performance.now();
        const { stepMs, readRows, catchUpLimit } = this.upkeep;
        const stepRows = index instanceof ShardedIndex ? this.upkeep.threadStepRows : Infinity;
        const building = index;
        const step = this.db.transaction((): 'read' | 'more' | 'log passed' => {
          if (removalsSeen === undefined) removalsSeen = this.sql.lastRemoval.get() as number;
          const removals = this.sql.removalsFrom.all(removalsSeen, readRows) as LoggedRemoval[];
          if (!followsOn(removals, removalsSeen)) return 'log passed';
          removalsSeen = applyRemovals(building, removals, removalsSeen);
          // The step's rows go to the index together: one message to one thread.
          const read: StoredDocument[] = [];
          let after = building.highestRowid;
          let exhausted = false;
          while (!exhausted && read.length < stepRows && (read.length === 0 || performance.now() - started < stepMs)) {
            const limit = Math.min(readRows, stepRows - read.length);
            const rows = this.sql.documentsFrom.all(after, limit) as StoredDocument[];
            for (const row of rows) read.push(row);
            after = rows.at(-1)?.id ?? after;
            exhausted = rows.length < limit;
          }
          this.addDocuments(building, read);
          return exhausted && removals.length < readRows ? 'read' : 'more';
        })();
        if (step === 'log passed') {
          if (index instanceof ShardedIndex) index.drop();
          index = this.replacementIndex();
          removalsSeen = undefined;
          continue;
        }
        if (step === 'more' || this.changesSince(index, removalsSeen!) > catchUpLimit) continue;
        this.noticeExternalWrites();
        const seen = this.catchUp(index, removalsSeen);
        if (seen === undefined) continue;
        index.trim();
        this.serve(index, seen);
        releaseAfterNextCollection();
        return;
      }
    } finally {
      // An index that did not take over (the corpus closed, or a step failed) frees its threads' memory.
      if (index instanceof ShardedIndex && this.index !== index) index.drop();
    }
  }

  /** Filters as groups of term ids (see ThreadQuery.filters); a value no document holds has none. */
  private filterTermIds(filters: SearchRequest['filters']): number[][] {
    return filters.map((filter) => filter.anyOf.flatMap((value) => this.dictionary.idOf(filterTerm(filter.field, value)) ?? []));
  }

  /** Applies a batch of changes in one transaction (a replica catching up). */
  applyChanges(changes: DocumentChange[]): void {
    this.write(() => {
      for (const change of changes) {
        if (change.document) this.writeDocument(change.document);
        else this.sql.deleteDocument.run(change.docId);
      }
    });
  }

  close(): void {
    this.closed = true;
    void this.searchThreads?.close();
    this.externalWrites.close();
    this.db.close();
  }
}

const EMPTY = new Uint8Array(0);

interface LoggedRemoval {
  seq: number;
  doc_rowid: number;
  terms: Uint8Array | null;
}

/** Whether logged deletions read after `removalsSeen` start right after it (the log was not pruned past it). */
function followsOn(removals: LoggedRemoval[], removalsSeen: number): boolean {
  return removals.length === 0 || removals[0].seq === removalsSeen + 1;
}

/** Marks the logged deletions in the index; returns the last one's sequence number. */
function applyRemovals(index: TextIndex | ShardedIndex, removals: LoggedRemoval[], removalsSeen: number): number {
  for (const removal of removals) index.remove(removal.doc_rowid, removal.terms ?? EMPTY);
  return removals.length > 0 ? removals.at(-1)!.seq : removalsSeen;
}
