import type pg from 'pg';
import type { PostgresDatabase } from '../platform/postgres-database.js';
import type {
  ChangeFeed,
  DocumentChange,
  DocumentRecord,
  DocumentReplica,
  DocumentStore,
  IngestEmbedding,
  IngestProgress,
  StoredDocument,
} from './document-store.js';
import { vectorBytes, vectorOfBytes } from './vector-bytes.js';

/** Serialises document writers, so that document seq order is commit order. */
const DOCUMENT_WRITE_LOCK = 7_204_311_902;
const INGEST_BATCH = 500;

interface DocumentRow {
  doc_id: string;
  title: string;
  text: string;
  metadata: DocumentRecord['metadata'];
  deleted: boolean;
  seq: number;
  embedding_key: string | null;
  vector: Buffer | null;
}

/**
 * The corpus in PostgreSQL: every write takes the next value of one sequence, so the table is
 * also a change feed (postgresChangeFeed) that each instance's search replica follows. Reads go to
 * this instance's replica; a write through this instance catches the replica up before it returns.
 */
export class PostgresDocuments implements DocumentStore {
  constructor(
    private readonly db: PostgresDatabase,
    private readonly replica: DocumentReplica,
    private readonly embeddings?: IngestEmbedding,
  ) {}

  async documentsPage(afterDocId: string, limit: number): Promise<StoredDocument[]> {
    const { rows } = await this.db.query<DocumentRow>(
      'SELECT doc_id, title, text, metadata, embedding_key FROM documents WHERE NOT deleted AND doc_id > $1 ORDER BY doc_id LIMIT $2',
      [afterDocId, limit],
    );
    return rows.map((row) => ({ docId: row.doc_id, title: row.title, text: row.text, metadata: row.metadata, embeddingKey: row.embedding_key }));
  }

  async getDocument(docId: string): Promise<DocumentRecord | undefined> {
    return (await this.replica.corpus()).getDocument(docId);
  }

  async getDocumentJson(docId: string): Promise<string | undefined> {
    return (await this.replica.corpus()).getDocumentJson(docId);
  }

  async countDocuments(): Promise<number> {
    return (await this.db.one<{ n: number }>('SELECT count(*) AS n FROM documents WHERE NOT deleted')).n;
  }

  async ingestDocuments(source: AsyncIterable<DocumentRecord>, onProgress?: (progress: IngestProgress) => void): Promise<number> {
    const count = await this.db.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [DOCUMENT_WRITE_LOCK]);
      let written = 0;
      let batch = new Map<string, DocumentRecord>();
      const stored = async (keys: string[]) => {
        const { rows } = await client.query<{ key: string }>('SELECT key FROM document_embeddings WHERE key = ANY($1)', [keys]);
        return new Set(rows.map((row) => row.key));
      };
      for await (const document of this.embeddings?.withVectors(source, stored) ?? source) {
        // A later record with the same id replaces an earlier one, as in the embedded store.
        batch.delete(document.docId);
        batch.set(document.docId, document);
        written++;
        if (batch.size >= INGEST_BATCH) {
          await writeDocuments(client, [...batch.values()]);
          batch = new Map();
        }
        if (onProgress && written % 1000 === 0) onProgress({ documents: written });
      }
      if (batch.size > 0) await writeDocuments(client, [...batch.values()]);
      return written;
    });
    onProgress?.({ documents: count });
    await this.replica.catchUp();
    return count;
  }

  async deleteDocument(docId: string): Promise<boolean> {
    const deleted = await this.db.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [DOCUMENT_WRITE_LOCK]);
      const { rowCount } = await client.query(
        `UPDATE documents SET deleted = true, seq = nextval('document_seq') WHERE doc_id = $1 AND NOT deleted`,
        [docId],
      );
      return (rowCount ?? 0) > 0;
    });
    await this.replica.catchUp();
    return deleted;
  }
}

/** The documents table read as a change feed: every write took the next value of document_seq. */
export function postgresChangeFeed(db: PostgresDatabase): ChangeFeed {
  return {
    async identity() {
      return (await db.one<{ id: string }>('SELECT id FROM corpus_identity')).id;
    },
    async changesSince(seq, limit) {
      const { rows } = await db.query<DocumentRow>(
        `SELECT d.doc_id, d.title, d.text, d.metadata, d.deleted, d.seq, d.embedding_key, e.vector
         FROM documents d LEFT JOIN document_embeddings e ON e.key = d.embedding_key
         WHERE d.seq > $1 ORDER BY d.seq LIMIT $2`,
        [seq, limit],
      );
      const changes: DocumentChange[] = rows.map((row) => ({
        docId: row.doc_id,
        document: row.deleted ? null : { docId: row.doc_id, title: row.title, text: row.text, metadata: row.metadata, ...embeddingOf(row) },
      }));
      return { changes, lastSeq: rows.at(-1)?.seq ?? seq };
    },
  };
}

function embeddingOf(row: DocumentRow): Pick<DocumentRecord, 'embedding'> {
  if (row.embedding_key === null) return {};
  return { embedding: { key: row.embedding_key, ...(row.vector ? { vector: vectorOfBytes(row.vector) } : {}) } };
}

async function writeDocuments(client: pg.PoolClient, documents: DocumentRecord[]): Promise<void> {
  const vectors = documents.flatMap((document) =>
    document.embedding?.vector ? [{ key: document.embedding.key, vector: document.embedding.vector }] : [],
  );
  if (vectors.length > 0) {
    await client.query('INSERT INTO document_embeddings (key, vector) SELECT * FROM unnest($1::text[], $2::bytea[]) ON CONFLICT (key) DO NOTHING', [
      vectors.map((entry) => entry.key),
      vectors.map((entry) => vectorBytes(entry.vector)),
    ]);
  }
  await client.query(
    `INSERT INTO documents (doc_id, title, text, metadata, deleted, seq, embedding_key)
     SELECT doc_id, title, text, metadata::json, false, nextval('document_seq'), embedding_key
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS batch(doc_id, title, text, metadata, embedding_key)
     ON CONFLICT (doc_id) DO UPDATE SET title = excluded.title, text = excluded.text,
       metadata = excluded.metadata, deleted = false, seq = excluded.seq, embedding_key = excluded.embedding_key`,
    [
      documents.map((document) => document.docId),
      documents.map((document) => document.title),
      documents.map((document) => document.text),
      documents.map((document) => JSON.stringify(document.metadata)),
      documents.map((document) => document.embedding?.key ?? null),
    ],
  );
}
