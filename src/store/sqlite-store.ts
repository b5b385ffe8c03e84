import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { SqliteAdminStore } from '../admin/sqlite-admin-store.js';
import { SqliteLedger } from '../billing/sqlite-ledger.js';
import { INDEX_UPKEEP, SqliteCorpus } from '../corpus/sqlite-corpus.js';
import type { DocumentEmbeddings } from '../embeddings/document-embeddings.js';
import { SqliteFaces } from '../faces/sqlite-gallery.js';
import { SqliteIdempotency } from '../idempotency/sqlite-idempotency.js';
import { BackgroundCheckpoint } from '../platform/background-checkpoint.js';
import { openSqlite } from '../platform/sqlite-open.js';
import { SqlitePortalStore } from '../portal/sqlite-portal-store.js';
import type { Language } from '../search/engine/languages.js';
import { SqliteSynonymStore } from '../synonyms/sqlite-synonym-store.js';
import { SqliteWebhookStore } from '../webhooks/sqlite-webhook-store.js';
import { migrateLedger } from './sqlite-schema.js';
import type { Store } from './store.js';

export interface SqliteStoreOptions {
  /** For a long-running service: checkpoint the WALs in worker threads, off the event loop. */
  backgroundCheckpoints?: boolean;
  /** See Config.searchThreads; 1 when not given. */
  searchThreads?: number;
  /** LOW_BALANCE_THRESHOLD: the credits.low mark of keys that have none of their own. */
  lowBalanceThreshold?: number | null;
  /** Told of what goes wrong in the background (see SqliteCorpus). */
  warn?: (message: string, error: unknown) => void;
  /** The embedder ingested documents get their vectors from, for semantic search; none: lexical only. */
  embeddings?: DocumentEmbeddings;
  /** SEARCH_LANGUAGE: what documents and queries without a language of their own are analysed in; absent: English. */
  language?: Language;
}

/**
 * The embedded store: two SQLite files in the data folder. ledger.sqlite holds the ledger, the
 * idempotency entries (so a claim sees its request's charge), the face gallery, admin tokens and the
 * audit log; corpus.sqlite
 * holds the documents, from which the search index is built.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly ledger: SqliteLedger;
  readonly documents: SqliteCorpus;
  readonly index: SqliteCorpus;
  readonly idempotency: SqliteIdempotency;
  readonly faces: SqliteFaces;
  readonly admin: SqliteAdminStore;
  readonly portal: SqlitePortalStore;
  readonly webhooks: SqliteWebhookStore;
  readonly synonyms: SqliteSynonymStore;
  private readonly db: Database.Database;
  private readonly pingStatement: Database.Statement;
  private readonly checkpoints: BackgroundCheckpoint[] = [];

  constructor(dataDir: string, options: SqliteStoreOptions = {}) {
    mkdirSync(dataDir, { recursive: true });
    this.db = openSqlite(join(dataDir, 'ledger.sqlite'));
    migrateLedger(this.db);
    this.ledger = new SqliteLedger(this.db, options.lowBalanceThreshold ?? null);
    this.idempotency = new SqliteIdempotency(this.db);
    this.faces = new SqliteFaces(this.db);
    this.admin = new SqliteAdminStore(this.db);
    this.portal = new SqlitePortalStore(this.db);
    this.webhooks = new SqliteWebhookStore(this.db);
    this.synonyms = new SqliteSynonymStore(this.db);
    this.documents = new SqliteCorpus(
      dataDir,
      { ...INDEX_UPKEEP, searchThreads: options.searchThreads ?? 1 },
      options.warn,
      options.embeddings,
      options.embeddings?.embedder.dimensions,
      options.language,
    );
    this.index = this.documents;
    if (options.backgroundCheckpoints) this.checkpointInBackground(dataDir);
    this.pingStatement = this.db.prepare('SELECT 1');
  }

  async ping(): Promise<number> {
    const started = performance.now();
    this.pingStatement.get();
    return performance.now() - started;
  }

  async close(): Promise<void> {
    for (const checkpoint of this.checkpoints) await checkpoint.close();
    try {
      await this.ledger.close();
    } finally {
      this.db.close();
      await this.documents.close();
    }
  }

  private checkpointInBackground(dataDir: string): void {
    // The worker copies WAL pages and fsyncs; this connection checkpoints only as a backstop that
    // bounds the WAL (about 40 MB), finding little left to copy when it does.
    this.db.pragma('wal_autocheckpoint = 10000');
    const ledger = new BackgroundCheckpoint(join(dataDir, 'ledger.sqlite'));
    void ledger.stopped.then(() => {
      if (this.db.open) this.db.pragma('wal_autocheckpoint = 1000');
    });
    // A large ingest by the CLI leaves its WAL to be copied into the corpus file; the service does
    // that off the event loop too.
    this.checkpoints.push(ledger, new BackgroundCheckpoint(join(dataDir, 'corpus.sqlite')));
  }
}
