import type pg from 'pg';
import type { PostgresDatabase } from '../platform/postgres-database.js';
import type { ChangeFeed, DocumentChange, DocumentRecord, DocumentReplica, DocumentStore, IngestProgress } from './document-store.js';

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
  ) {}

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
      for await (const document of source) {
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
        'SELECT doc_id, title, text, metadata, deleted, seq FROM documents WHERE seq > $1 ORDER BY seq LIMIT $2',
        [seq, limit],
      );
      const changes: DocumentChange[] = rows.map((row) => ({
        docId: row.doc_id,
        document: row.deleted ? null : { docId: row.doc_id, title: row.title, text: row.text, metadata: row.metadata },
      }));
      return { changes, lastSeq: rows.at(-1)?.seq ?? seq };
    },
  };
}

async function writeDocuments(client: pg.PoolClient, documents: DocumentRecord[]): Promise<void> {
  await client.query(
    `INSERT INTO documents (doc_id, title, text, metadata, deleted, seq)
     SELECT doc_id, title, text, metadata::json, false, nextval('document_seq')
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS batch(doc_id, title, text, metadata)
     ON CONFLICT (doc_id) DO UPDATE SET title = excluded.title, text = excluded.text,
       metadata = excluded.metadata, deleted = false, seq = excluded.seq`,
    [
      documents.map((document) => document.docId),
      documents.map((document) => document.title),
      documents.map((document) => document.text),
      documents.map((document) => JSON.stringify(document.metadata)),
    ],
  );
}
