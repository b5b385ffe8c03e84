import { PostgresAdminStore } from '../admin/postgres-admin-store.js';
import { PostgresLedger } from '../billing/postgres-ledger.js';
import { SearchReplica } from '../corpus/replica.js';
import { PostgresDocuments, postgresChangeFeed } from '../documents/postgres-documents.js';
import type { DocumentEmbeddings } from '../embeddings/document-embeddings.js';
import { PostgresFaces } from '../faces/postgres-gallery.js';
import { PostgresIdempotency } from '../idempotency/postgres-idempotency.js';
import { type PostgresConnection, PostgresDatabase } from '../platform/postgres-database.js';
import { PostgresPortalStore } from '../portal/postgres-portal-store.js';
import type { Language } from '../search/engine/languages.js';
import { PostgresSynonymStore } from '../synonyms/postgres-synonym-store.js';
import { PostgresWebhookStore } from '../webhooks/postgres-webhook-store.js';
import { migratePostgres } from './postgres-schema.js';
import type { Store } from './store.js';

export interface PostgresOptions extends PostgresConnection {
  /** How often the local search replica asks for new document changes. */
  replicaPollMs: number;
  /** See Config.searchThreads; 1 when not given. */
  searchThreads?: number;
  /** Where the search replica is kept across restarts (see SearchReplica); in a temporary folder when not given. */
  replicaDir?: string;
  /** Told of what goes wrong in the background (see SqliteCorpus). */
  warn?: (message: string, error: unknown) => void;
  /** LOW_BALANCE_THRESHOLD: the credits.low mark of keys that have none of their own. */
  lowBalanceThreshold?: number | null;
  /** The embedder ingested documents get their vectors from, for semantic search; none: lexical only. */
  embeddings?: DocumentEmbeddings;
  /** SEARCH_LANGUAGE: what documents and queries without a language of their own are analysed in; absent: English. */
  language?: Language;
}

/**
 * The scale-out store: the ledger, idempotency entries, face gallery and documents in one
 * PostgreSQL database shared by any number of instances; searches on a local replica of the
 * corpus that follows the documents' change feed.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly ledger: PostgresLedger;
  readonly documents: PostgresDocuments;
  readonly index: SearchReplica;
  readonly idempotency: PostgresIdempotency;
  readonly faces: PostgresFaces;
  readonly admin: PostgresAdminStore;
  readonly portal: PostgresPortalStore;
  readonly webhooks: PostgresWebhookStore;
  readonly synonyms: PostgresSynonymStore;

  private constructor(
    private readonly db: PostgresDatabase,
    options: PostgresOptions,
  ) {
    this.ledger = new PostgresLedger(db, options.lowBalanceThreshold ?? null);
    this.index = new SearchReplica(postgresChangeFeed(db), {
      pollMs: options.replicaPollMs,
      searchThreads: options.searchThreads ?? 1,
      dir: options.replicaDir,
      warn: options.warn,
      vectorDimensions: options.embeddings?.embedder.dimensions,
      language: options.language,
    });
    this.documents = new PostgresDocuments(db, this.index, options.embeddings);
    this.idempotency = new PostgresIdempotency(db);
    this.faces = new PostgresFaces(db);
    this.admin = new PostgresAdminStore(db);
    this.portal = new PostgresPortalStore(db);
    this.webhooks = new PostgresWebhookStore(db);
    this.synonyms = new PostgresSynonymStore(db);
  }

  /** Connects and applies pending migrations. */
  static async open(options: PostgresOptions): Promise<PostgresStore> {
    const db = new PostgresDatabase(options);
    try {
      await migratePostgres(db.pool);
    } catch (error) {
      await db.end();
      throw error;
    }
    return new PostgresStore(db, options);
  }

  /** Applies pending migrations; returns their numbers. */
  static async migrate(options: PostgresConnection): Promise<number[]> {
    const db = new PostgresDatabase(options);
    try {
      return await migratePostgres(db.pool);
    } finally {
      await db.end();
    }
  }

  connections(): { total: number; idle: number; waiting: number } {
    const { totalCount, idleCount, waitingCount } = this.db.pool;
    return { total: totalCount, idle: idleCount, waiting: waitingCount };
  }

  async ping(): Promise<number> {
    const started = performance.now();
    await this.db.query('SELECT 1');
    return performance.now() - started;
  }

  async close(): Promise<void> {
    await this.ledger.close();
    await this.index.close();
    await this.db.end();
  }
}
