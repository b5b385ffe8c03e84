import { join } from 'node:path';
import type { DocumentChange, DocumentRecord, DocumentStore, IngestProgress, StoredDocument } from '../documents/document-store.js';
import type { DocumentEmbeddings } from '../embeddings/document-embeddings.js';
import type { DocumentIndex, IndexOrigin, IndexQuery, LanguageChange, SearchResult } from '../search/document-index.js';
import { ENGLISH, type Language } from '../search/engine/languages.js';
import { CorpusFile } from './corpus-file.js';
import { CorpusSearch } from './corpus-search.js';
import { INDEX_UPKEEP, IndexKeeper, type IndexUpkeep } from './index-keeper.js';
import { IndexSegments } from './index-segments.js';
import { SqliteDocuments } from './sqlite-documents.js';
import { VectorKeeper } from './vector-keeper.js';

export { INDEX_UPKEEP, type IndexUpkeep };

/**
 * A corpus in one SQLite file, with its documents (corpus/sqlite-documents.ts) and their search
 * index (corpus/index-keeper.ts, corpus/corpus-search.ts) opened together: the embedded store's
 * corpus, and each PostgreSQL-backed instance's local search replica.
 */
export class SqliteCorpus implements DocumentStore, DocumentIndex {
  private readonly file: CorpusFile;
  private readonly documents: SqliteDocuments;
  private readonly keeper: IndexKeeper;
  private readonly searches: CorpusSearch;
  private readonly vectors: VectorKeeper | undefined;

  /**
   * `warn` is told of what goes wrong in the background: a failed write of the index to disk. With
   * `embeddings`, ingested documents get their vectors, and a vector index is kept beside the text
   * index; a replica is given none, and keeps the vectors its feed brings (`vectorDimensions`).
   * `language` (SEARCH_LANGUAGE) analyses the documents without a `language` of their own, and
   * the queries without one.
   */
  constructor(
    dir: string,
    upkeep = INDEX_UPKEEP,
    warn?: (message: string, error: unknown) => void,
    private readonly embeddings?: DocumentEmbeddings,
    vectorDimensions = embeddings?.embedder.dimensions,
    language: Language = ENGLISH,
  ) {
    this.file = new CorpusFile(dir, language);
    this.documents = new SqliteDocuments(this.file);
    this.keeper = new IndexKeeper(this.file, upkeep, new IndexSegments(join(dir, 'index'), upkeep, warn));
    this.vectors = vectorDimensions
      ? new VectorKeeper(this.file, join(dir, 'vectors'), vectorDimensions, upkeep.vectorBuildInPlaceRows, warn)
      : undefined;
    this.searches = new CorpusSearch(this.file, this.keeper, this.vectors);
  }

  getDocument(docId: string): Promise<DocumentRecord | undefined> {
    return this.documents.getDocument(docId);
  }

  getDocumentJson(docId: string): Promise<string | undefined> {
    return this.documents.getDocumentJson(docId);
  }

  ingestDocuments(source: AsyncIterable<DocumentRecord>, onProgress?: (progress: IngestProgress) => void): Promise<number> {
    const documents = this.documents;
    const embedded = this.embeddings?.withVectors(source, (keys) => documents.storedEmbeddingKeys(keys));
    return documents.ingestDocuments(embedded ?? source, onProgress);
  }

  documentsPage(afterDocId: string, limit: number): Promise<StoredDocument[]> {
    return this.documents.documentsPage(afterDocId, limit);
  }

  deleteDocument(docId: string): Promise<boolean> {
    return this.documents.deleteDocument(docId);
  }

  countDocuments(): Promise<number> {
    return this.documents.countDocuments();
  }

  /** Applies a batch of changes in one transaction (a replica catching up). */
  applyChanges(changes: DocumentChange[]): void {
    this.documents.applyChanges(changes);
  }

  search(request: IndexQuery): Promise<SearchResult> {
    return this.searches.search(request);
  }

  prepareSearch(): Promise<IndexOrigin> {
    return this.searches.prepareSearch();
  }

  semanticReady(): boolean {
    return this.searches.semanticReady();
  }

  languageChange(): LanguageChange | undefined {
    return this.file.languageChange;
  }

  /** The documents the search index holds, live and deleted (postings not dropped yet), and whether a new one is being built. */
  indexStatistics(): { liveDocuments: number; deletedDocuments: number; rebuilding: boolean } {
    return this.keeper.statistics();
  }

  /**
   * After a bulk write where nothing is served (a CLI ingest, `embed --missing`): the text index
   * built and the vector index brought level on every core, both written to disk (the text index
   * on close), so that the next start reads them back instead of building them.
   */
  async writeIndexes(): Promise<void> {
    await this.keeper.prepare();
    await this.vectors?.writeLevel();
  }

  async close(): Promise<void> {
    try {
      await this.vectors?.close();
      await this.keeper.close();
    } finally {
      this.file.close();
    }
  }
}
