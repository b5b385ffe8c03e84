import type { DocumentChange, DocumentRecord, DocumentStore, IngestProgress, StoredDocument } from '../documents/document-store.js';
import { vectorBytes } from '../documents/vector-bytes.js';
import { startModuleWorker } from '../platform/worker-thread.js';
import type { AnalysedDocument } from '../search/engine/term-vector.js';
import { BackgroundAnalyser } from '../search/engine/threads/background-analyser.js';
import type { CorpusFile } from './corpus-file.js';

const DOCUMENT_CACHE_CHARS = 32 * 1024 * 1024;
/** An ingest analyses this many documents itself before handing analysis to a worker thread. */
const IN_THREAD_DOCUMENTS = 2000;
/** Documents per message to and from the analysis worker. */
const BACKGROUND_BATCH = 500;
/** Batches queued for the analysis worker before this thread writes or analyses one itself. */
const WORKER_BACKLOG = 3;

interface DocumentRow {
  doc_id: string;
  title: string;
  text: string;
  metadata: string;
}

/**
 * The documents of a corpus file, each written with its term vector. /document reads are cached
 * as their JSON, least recently used out first past DOCUMENT_CACHE_CHARS, and the cache is dropped
 * whenever the file changes.
 */
export class SqliteDocuments implements DocumentStore {
  /** Documents as /document's JSON by id (unknown ids as null). */
  private readonly cache = new Map<string, string | null>();
  private cachedChars = 0;

  constructor(private readonly file: CorpusFile) {
    file.onChange(() => this.dropCache());
  }

  async getDocumentJson(docId: string): Promise<string | undefined> {
    this.file.noticeExternalWrites();
    const cached = this.cache.get(docId);
    if (cached !== undefined) {
      this.cache.delete(docId);
      this.cache.set(docId, cached);
      return cached ?? undefined;
    }
    const row = this.file.sql.document.get(docId) as DocumentRow | undefined;
    let json: string | null = null;
    if (row) {
      const core = `{"doc_id":${JSON.stringify(row.doc_id)},"title":${JSON.stringify(row.title)},"text":${JSON.stringify(row.text)}`;
      json = row.metadata === '{}' ? `${core}}` : `${core},${row.metadata.slice(1)}`;
    }
    this.cacheDocument(docId, json);
    return json ?? undefined;
  }

  async getDocument(docId: string): Promise<DocumentRecord | undefined> {
    const row = this.file.sql.document.get(docId) as DocumentRow | undefined;
    return row && { docId: row.doc_id, title: row.title, text: row.text, metadata: JSON.parse(row.metadata) };
  }

  async countDocuments(): Promise<number> {
    return (this.file.sql.countDocuments.get() as { n: number }).n;
  }

  async deleteDocument(docId: string): Promise<boolean> {
    let deleted = false;
    this.file.write(() => {
      deleted = this.file.sql.deleteDocument.run(docId).changes > 0;
    });
    return deleted;
  }

  /** Applies a batch of changes in one transaction (a replica catching up). */
  applyChanges(changes: DocumentChange[]): void {
    this.file.write(() => {
      for (const change of changes) {
        if (change.document) this.writeDocument(change.document);
        else this.file.sql.deleteDocument.run(change.docId);
      }
    });
  }

  /**
   * One transaction across the whole source: a bad record anywhere leaves the corpus untouched.
   * Past the first few thousand documents, analysis moves to a worker thread (BackgroundAnalyser):
   * batches are analysed there while the next one is read here and earlier ones written, in source
   * order. When the worker falls behind, this thread analyses a batch itself if it holds no term
   * the dictionary lacks (the worker alone adds terms).
   */
  async ingestDocuments(source: AsyncIterable<DocumentRecord>, onProgress?: (progress: IngestProgress) => void): Promise<number> {
    const { db } = this.file;
    this.file.beginWrite();
    // No checkpoint inside the commit: copying a million documents' WAL into the file takes as long
    // as a third of the ingest, and the documents are durable (and searchable) without it. It happens
    // when this connection closes, or in the service's checkpoint thread, or at a later commit.
    const autocheckpoint = db.pragma('wal_autocheckpoint', { simple: true }) as number;
    db.pragma('wal_autocheckpoint = 0');
    const pipeline = new IngestPipeline(this, onProgress);
    try {
      for await (const document of source) await pipeline.take(document);
      await pipeline.finish();
      this.file.commitWrite();
    } catch (error) {
      this.file.rollbackWrite();
      throw error;
    } finally {
      db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
      await pipeline.close();
    }
    onProgress?.({ documents: pipeline.count });
    return pipeline.count;
  }

  writeDocument(document: DocumentRecord): void {
    this.insertDocument(document, this.file.analyser.analyse(document.title, document.text, document.metadata));
  }

  insertDocument(document: DocumentRecord, analysed: AnalysedDocument): void {
    const { sql } = this.file;
    sql.deleteDocument.run(document.docId);
    sql.insertDocument.run(
      document.docId,
      document.title,
      document.text,
      JSON.stringify(document.metadata),
      analysed.titleLength,
      analysed.textLength,
      analysed.terms,
      document.embedding?.key ?? null,
    );
    if (document.embedding?.vector) sql.insertEmbedding.run(document.embedding.key, vectorBytes(document.embedding.vector));
  }

  /** Which of these keys the file holds a vector for (within the caller's transaction, if any). */
  storedEmbeddingKeys(keys: string[]): Set<string> {
    return new Set(this.file.sql.storedEmbeddingKeys.all(JSON.stringify(keys)) as string[]);
  }

  async documentsPage(afterDocId: string, limit: number): Promise<StoredDocument[]> {
    const rows = this.file.sql.documentsPage.all(afterDocId, limit) as Array<DocumentRow & { embedding_key: string | null }>;
    return rows.map((row) => ({
      docId: row.doc_id,
      title: row.title,
      text: row.text,
      metadata: JSON.parse(row.metadata),
      embeddingKey: row.embedding_key,
    }));
  }

  /** Term vectors for a batch, analysed here where the dictionary holds every term of a document, by the worker for the others. */
  async analyseSharing(documents: DocumentRecord[], background: BackgroundAnalyser): Promise<AnalysedDocument[]> {
    const analyser = this.file.analyser;
    const vectors = documents.map((document) => analyser.analyseKnown(document.title, document.text, document.metadata));
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

  startBackgroundAnalyser(): BackgroundAnalyser {
    return new BackgroundAnalyser(this.file.dictionary, this.file.language, startModuleWorker);
  }

  /** Unknown ids are cached too (as null), so probing for missing documents costs no more reads. */
  private cacheDocument(docId: string, json: string | null): void {
    this.cache.set(docId, json);
    this.cachedChars += docId.length + (json?.length ?? 0);
    for (const [oldest, value] of this.cache) {
      if (this.cachedChars <= DOCUMENT_CACHE_CHARS) break;
      this.cache.delete(oldest);
      this.cachedChars -= oldest.length + (value?.length ?? 0);
    }
  }

  private dropCache(): void {
    this.cache.clear();
    this.cachedChars = 0;
  }
}

/** One ingest's documents on their way in: analysed here, then by the worker, and written in source order. */
class IngestPipeline {
  count = 0;
  private background: BackgroundAnalyser | undefined;
  private batch: DocumentRecord[] = [];
  private readonly queue: Array<{ documents: DocumentRecord[]; vectors: Promise<AnalysedDocument[]> }> = [];

  constructor(
    private readonly documents: SqliteDocuments,
    private readonly onProgress: ((progress: IngestProgress) => void) | undefined,
  ) {}

  async take(document: DocumentRecord): Promise<void> {
    if (this.background) {
      this.batch.push(document);
      if (this.batch.length === BACKGROUND_BATCH) await this.send(this.background);
      return;
    }
    this.documents.writeDocument(document);
    this.progress(1);
    if (this.count === IN_THREAD_DOCUMENTS) this.background = this.documents.startBackgroundAnalyser();
  }

  async finish(): Promise<void> {
    if (this.background && this.batch.length > 0) await this.send(this.background);
    while (this.queue.length > 0) await this.writeOldest();
  }

  async close(): Promise<void> {
    await this.background?.close();
  }

  private async send(background: BackgroundAnalyser): Promise<void> {
    const documents = this.batch;
    this.batch = [];
    const vectors = background.backlog >= WORKER_BACKLOG ? this.documents.analyseSharing(documents, background) : background.analyse(documents);
    vectors.catch(() => undefined);
    this.queue.push({ documents, vectors });
    while (this.queue.length > WORKER_BACKLOG) await this.writeOldest();
  }

  private async writeOldest(): Promise<void> {
    const { documents, vectors } = this.queue.shift() as { documents: DocumentRecord[]; vectors: Promise<AnalysedDocument[]> };
    const analysed = await vectors;
    documents.forEach((document, index) => {
      this.documents.insertDocument(document, analysed[index]);
    });
    this.progress(documents.length);
  }

  private progress(written: number): void {
    const before = this.count;
    this.count += written;
    if (this.onProgress && Math.floor(this.count / 1000) > Math.floor(before / 1000)) this.onProgress({ documents: this.count });
  }
}
