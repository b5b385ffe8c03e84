import { join } from 'node:path';
import type { DocumentChange, DocumentRecord, DocumentStore, IngestProgress } from '../documents/document-store.js';
import { CorpusFile } from './corpus/corpus-file.js';
import { CorpusSearch } from './corpus/corpus-search.js';
import { INDEX_UPKEEP, IndexKeeper, type IndexUpkeep } from './corpus/index-keeper.js';
import { IndexSegments } from './corpus/index-segments.js';
import { SqliteDocuments } from './corpus/sqlite-documents.js';
import type { DocumentIndex, IndexOrigin, SearchRequest, SearchResult } from './document-index.js';

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

  /** `warn` is told of what goes wrong in the background: a failed write of the index to disk. */
  constructor(dir: string, upkeep = INDEX_UPKEEP, warn?: (message: string, error: unknown) => void) {
    this.file = new CorpusFile(dir);
    this.documents = new SqliteDocuments(this.file);
    this.keeper = new IndexKeeper(this.file, upkeep, new IndexSegments(join(dir, 'index'), upkeep, warn));
    this.searches = new CorpusSearch(this.file, this.keeper);
  }

  getDocument(docId: string): Promise<DocumentRecord | undefined> {
    return this.documents.getDocument(docId);
  }

  getDocumentJson(docId: string): Promise<string | undefined> {
    return this.documents.getDocumentJson(docId);
  }

  ingestDocuments(source: AsyncIterable<DocumentRecord>, onProgress?: (progress: IngestProgress) => void): Promise<number> {
    return this.documents.ingestDocuments(source, onProgress);
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

  search(request: SearchRequest): Promise<SearchResult> {
    return this.searches.search(request);
  }

  prepareSearch(): Promise<IndexOrigin> {
    return this.searches.prepareSearch();
  }

  /** The documents the search index holds, live and deleted (postings not dropped yet), and whether a new one is being built. */
  indexStatistics(): { liveDocuments: number; deletedDocuments: number; rebuilding: boolean } {
    return this.keeper.statistics();
  }

  async close(): Promise<void> {
    try {
      await this.keeper.close();
    } finally {
      this.file.close();
    }
  }
}
