/** A metadata field's value as a document carries it: any JSON value. */
export type MetadataValue = string | number | boolean | null | MetadataValue[] | { [field: string]: MetadataValue };

export interface DocumentRecord {
  docId: string;
  title: string;
  text: string;
  metadata: Record<string, MetadataValue>;
  /**
   * Its vector for semantic search, when an embedder is configured: the key it is stored by (see
   * embeddingKey), and the vector itself unless the store already holds one by that key.
   */
  embedding?: { key: string; vector?: Float32Array };
}

/** A stored document with the key of the vector it was stored with (null: none). */
export interface StoredDocument extends DocumentRecord {
  embeddingKey: string | null;
}

/** Which of these embedding keys the store already holds a vector for. */
export type StoredKeys = (keys: string[]) => Set<string> | Promise<Set<string>>;

/**
 * What gives ingested documents their vectors on their way into a store, looking up which the
 * store already holds (embeddings/document-embeddings.ts). It rejects the whole source on a failure,
 * so that the store's all-or-nothing ingest writes nothing.
 */
export interface IngestEmbedding {
  withVectors(source: AsyncIterable<DocumentRecord>, stored: StoredKeys): AsyncIterable<DocumentRecord>;
}

export interface IngestProgress {
  documents: number;
}

/** One entry of a change feed: the document as it now is, or null once it was deleted. */
export interface DocumentChange {
  docId: string;
  document: DocumentRecord | null;
}

/** The change feed of a shared corpus: changes after `seq`, oldest first, at most `limit`. A search replica follows it. */
export interface ChangeFeed {
  changesSince(seq: number, limit: number): Promise<{ changes: DocumentChange[]; lastSeq: number }>;
  /** Which database's feed this is: its sequence numbers mean nothing in another's. */
  identity(): Promise<string>;
}

/**
 * A local copy that follows a change feed (corpus/replica.ts): where a shared corpus's documents are
 * read, and what a write through this instance catches up before it returns.
 */
export interface DocumentReplica {
  corpus(): Promise<Pick<DocumentStore, 'getDocument' | 'getDocumentJson'>>;
  catchUp(): Promise<void>;
}

/**
 * The corpus /document reads and the CLI writes. SQLite keeps it beside the search index
 * (corpus/sqlite-corpus.ts); PostgreSQL keeps it in a table with a change feed that each
 * instance's search replica follows (postgres-documents.ts).
 */
export interface DocumentStore {
  getDocument(docId: string): Promise<DocumentRecord | undefined>;
  /**
   * The same document as JSON text of one object: doc_id, title, text, then the metadata fields.
   * Lets /document answer without parsing and re-serialising what was stored as JSON.
   */
  getDocumentJson(docId: string): Promise<string | undefined>;
  /** Writes every document of the source in one transaction: all or nothing. Replaces existing ids. */
  ingestDocuments(source: AsyncIterable<DocumentRecord>, onProgress?: (progress: IngestProgress) => void): Promise<number>;
  deleteDocument(docId: string): Promise<boolean>;
  countDocuments(): Promise<number>;
  /** Up to `limit` documents after `afterDocId` in doc_id order, with their vectors' keys: what `embed --missing` walks. */
  documentsPage(afterDocId: string, limit: number): Promise<StoredDocument[]>;
  /**
   * After a bulk write in a process that serves nothing (a CLI ingest, `embed --missing`): the
   * search indexes kept beside the documents brought level and written, so that the next start
   * reads them. Absent (PostgreSQL): each instance's replica keeps its own.
   */
  writeIndexes?(): Promise<void>;
}
