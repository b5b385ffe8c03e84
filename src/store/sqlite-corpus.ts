import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { ExternalWrites } from './external-writes.js';
import { openSqlite } from './sqlite-open.js';
import { migrateCorpus } from './sqlite-schema.js';
import type { DocumentRecord, IngestProgress, SearchRequest, SearchResult } from './store.js';
import { stemOf } from './text-index/analysis.js';
import { BackgroundAnalyser } from './text-index/background-analyser.js';
import { DocumentAnalyser, filterTerm, metadataWordTerm, TermDictionary, type AnalysedDocument } from './text-index/term-vector.js';
import { TextIndex, type IndexedDocument, type SearchField } from './text-index/text-index.js';

const DOCUMENT_CACHE_CHARS = 32 * 1024 * 1024;
/** An ingest analyses this many documents itself before handing analysis to a worker thread. */
const IN_THREAD_DOCUMENTS = 2000;
/** Documents per message to and from the analysis worker. */
const BACKGROUND_BATCH = 500;
/** Batches queued for the analysis worker before this thread writes or analyses one itself. */
const WORKER_BACKLOG = 3;
/** Documents handed to the index at a time while loading. */
const INDEX_LOAD_BATCH = 10_000;
/**
 * Deleted documents' postings, as a share of every document the index holds, past which the index
 * is built again without them, in the background. A deletion (and the old version of every
 * re-ingested document) only marks its postings skipped: a corpus re-ingested nightly would
 * otherwise hold one more copy of itself in memory every night until a restart, and every search
 * would step over the dead postings. A quarter keeps the waste below a third of the live index.
 */
const COMPACT_DELETED_SHARE = 0.25;
/**
 * The pace of that rebuild: a step reads `readRows` documents at a time for up to `stepMs`, then
 * requests get their turn (at a million documents, 250 rows take about 6 ms).
 */
export interface CompactionPace {
  stepMs: number;
  readRows: number;
}
const COMPACTION_PACE: CompactionPace = { stepMs: 10, readRows: 250 };
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
  private index: TextIndex | undefined;
  private indexStale = false;
  private removalsSeen = 0;
  private readonly filterCache = new Map<string, Uint32Array>();
  /** The rebuild that drops deleted documents' postings, while one runs (see COMPACT_DELETED_SHARE). */
  private compaction: Promise<void> | undefined;
  private closed = false;

  constructor(
    dir: string,
    private readonly compactionPace = COMPACTION_PACE,
  ) {
    this.db = openSqlite(join(dir, 'corpus.sqlite'), { pageSize: CORPUS_PAGE_SIZE });
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
      documentsAfter: c.prepare('SELECT id, title_length, text_length, terms FROM documents WHERE id > ? ORDER BY id'),
      documentsFrom: c.prepare('SELECT id, title_length, text_length, terms FROM documents WHERE id > ? ORDER BY id LIMIT ?'),
      removalsAfter: c.prepare('SELECT seq, doc_rowid, terms FROM removed_documents WHERE seq > ? ORDER BY seq'),
      lastRemoval: c.prepare('SELECT coalesce(max(seq), 0) FROM removed_documents').pluck(),
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
      let rows: Array<{ id: number; title: string; text: string; metadata: string }>;
      let after = 0;
      while ((rows = this.sql.unanalysed.all(after) as typeof rows).length > 0) {
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

  async ingestDocuments(
    source: AsyncIterable<DocumentRecord>,
    onProgress?: (progress: IngestProgress) => void,
  ): Promise<number> {
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
      documents.forEach((document, index) => this.insertDocument(document, analysed[index]!));
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
        if (vector === null) vectors[index] = fromWorker[next++]!;
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

  /** Loads the search index now rather than on the first query. */
  prepareSearch(): void {
    this.currentIndex();
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
    const result = index.search({
      terms: [...termIds],
      field: field.kind satisfies SearchField,
      filter: this.filterBitmap(index, request.filters),
      topK: request.topK,
    });
    // A row can be gone only while this connection's own transaction holds the index back.
    const hits = result.hits.flatMap((hit) => {
      const row = this.sql.hit.get(hit.rowid) as { doc_id: string; title: string } | undefined;
      return row ? [{ docId: row.doc_id, title: row.title, score: hit.score }] : [];
    });
    // Equal scores in doc_id order, as before the index was our own.
    hits.sort((a, b) => b.score - a.score || (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0));
    return { total: result.total, hits: hits.slice(0, request.topK) };
  }

  /** The index, brought up to date with every commit to the file first. */
  private currentIndex(): TextIndex {
    this.noticeExternalWrites();
    // Inside this connection's own ingest, reads would see its uncommitted documents: the index
    // catches up once the transaction has ended.
    if (this.index && this.db.inTransaction) return this.index;
    if (!this.index) this.loadIndex(new TextIndex());
    else if (this.indexStale) this.loadIndex(this.index);
    const index = this.index!;
    if (!this.compaction && index.deletedDocuments > COMPACT_DELETED_SHARE * (index.liveDocuments + index.deletedDocuments)) {
      // A failed rebuild leaves the serving index as it was (exact, only larger); the next search
      // tries again.
      this.compaction = this.compact()
        .catch(() => undefined)
        .finally(() => (this.compaction = undefined));
    }
    return index;
  }

  /** The documents the search index holds, live and deleted (postings not dropped yet), and whether it is being rebuilt without the deleted. */
  indexStatistics(): { liveDocuments: number; deletedDocuments: number; compacting: boolean } {
    const index = this.currentIndex();
    return { liveDocuments: index.liveDocuments, deletedDocuments: index.deletedDocuments, compacting: this.compaction !== undefined };
  }

  /**
   * Brings the index level with the file and serves from it: a new index reads everything, an
   * existing one catches up (see catchUp), and one the deletion log no longer reaches back for is
   * replaced by a new one.
   */
  private loadIndex(index: TextIndex): void {
    const liveBefore = index.liveDocuments;
    const fresh = index.highestRowid === 0 && liveBefore === 0;
    const seen = this.catchUp(index, fresh ? undefined : this.removalsSeen);
    if (seen === undefined) return this.loadIndex(new TextIndex());
    // Posting lists grow by doubling; after a load that grew the index by a tenth or more, the
    // slack is given back (a bulk ingest followed while running would otherwise keep up to half).
    if (index.liveDocuments >= liveBefore * 1.1) index.trim();
    this.serve(index, seen);
  }

  private serve(index: TextIndex, removalsSeen: number): void {
    this.index = index;
    this.removalsSeen = removalsSeen;
    this.indexStale = false;
    this.filterCache.clear();
  }

  /**
   * Adds the documents above the index's highest row id and applies the deletions logged after
   * `removalsSeen` (for an index read from the start, undefined: none), all from one read
   * snapshot. Returns the last deletion seen, or undefined when the log no longer reaches back to
   * `removalsSeen`, and the index cannot be brought level.
   */
  private catchUp(index: TextIndex, removalsSeen: number | undefined): number | undefined {
    return this.db.transaction((): number | undefined => {
      this.dictionary.load(this.sql.termsAfter.all(this.dictionary.highestId) as Array<{ id: number; term: string }>);
      if (removalsSeen === undefined) {
        const seen = this.sql.lastRemoval.get() as number;
        this.addDocumentsAfter(index, this.sql.documentsAfter.iterate(index.highestRowid) as Iterable<StoredVector>);
        return seen;
      }
      const removals = this.sql.removalsAfter.all(removalsSeen) as Array<{ seq: number; doc_rowid: number; terms: Uint8Array | null }>;
      if (removals.length > 0 && removals[0]!.seq !== removalsSeen + 1) return undefined;
      this.addDocumentsAfter(index, this.sql.documentsAfter.iterate(index.highestRowid) as Iterable<StoredVector>);
      for (const removal of removals) index.remove(removal.doc_rowid, removal.terms ?? EMPTY);
      return removals.length > 0 ? removals.at(-1)!.seq : removalsSeen;
    })();
  }

  private addDocumentsAfter(index: TextIndex, rows: Iterable<StoredVector>): void {
    let batch: IndexedDocument[] = [];
    for (const row of rows) {
      batch.push({ rowid: row.id, titleLength: row.title_length ?? 0, textLength: row.text_length ?? 0, terms: row.terms ?? EMPTY });
      if (batch.length === INDEX_LOAD_BATCH) {
        index.add(batch);
        batch = [];
      }
    }
    index.add(batch);
  }

  /**
   * Builds the index again from the file, without the deleted documents, while the current one
   * serves: a few milliseconds of reading at a time, each in a read transaction of its own, never
   * inside this connection's own write. Rows deleted after a step read them are in the deletion
   * log, and rows written after it have higher row ids, so catching up from the log position
   * taken before the first step (as any index catches up) leaves it level with the file.
   */
  private async compact(): Promise<void> {
    const index = new TextIndex();
    let removalsSeen: number | undefined;
    for (let done = false; !done; ) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.closed) return;
      if (this.db.inTransaction) continue;
      const started = performance.now();
      const { stepMs, readRows } = this.compactionPace;
      done = this.db.transaction((): boolean => {
        removalsSeen ??= this.sql.lastRemoval.get() as number;
        do {
          const rows = this.sql.documentsFrom.all(index.highestRowid, readRows) as StoredVector[];
          this.addDocumentsAfter(index, rows);
          if (rows.length < readRows) return true;
        } while (performance.now() - started < stepMs);
        return false;
      })();
    }
    while (this.db.inTransaction) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.closed) return;
    }
    this.noticeExternalWrites();
    const seen = this.catchUp(index, removalsSeen);
    // Past the log's reach the serving index is rebuilt at its next search anyway.
    if (seen === undefined) return;
    index.trim();
    this.serve(index, seen);
  }

  /** The documents every filter allows, as a bitmap over the index's document numbers. */
  private filterBitmap(index: TextIndex, filters: SearchRequest['filters']): Uint32Array | null {
    if (filters.length === 0) return null;
    const cacheKey = JSON.stringify(filters);
    const cached = this.filterCache.get(cacheKey);
    if (cached) return cached;
    let allowed: Uint32Array | null = null;
    for (const filter of filters) {
      const termIds = filter.anyOf.flatMap((value) => this.dictionary.idOf(filterTerm(filter.field, value)) ?? []);
      const bits = index.documentsWithAny(termIds);
      if (allowed) for (let word = 0; word < allowed.length; word++) allowed[word]! &= bits[word]!;
      else allowed = bits;
    }
    if (this.filterCache.size >= FILTER_CACHE_ENTRIES) this.filterCache.delete(this.filterCache.keys().next().value!);
    this.filterCache.set(cacheKey, allowed!);
    return allowed;
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
    this.externalWrites.close();
    this.db.close();
  }
}

const EMPTY = new Uint8Array(0);

interface StoredVector {
  id: number;
  title_length: number | null;
  text_length: number | null;
  terms: Uint8Array | null;
}
