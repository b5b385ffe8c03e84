import { join } from 'node:path';
import { type Config, searchThreadsOf } from '../config.js';
import { DocumentEmbeddings } from '../embeddings/document-embeddings.js';
import { embedderOf } from '../embeddings/embedders.js';
import { ENGLISH, type Language, languageNamed } from '../search/engine/languages.js';
import { type PostgresOptions, PostgresStore } from './postgres-store.js';
import { SqliteStore } from './sqlite-store.js';
import type { Store } from './store.js';

type StoreConfig = Pick<
  Config,
  | 'databaseUrl'
  | 'dataDir'
  | 'pgPoolMax'
  | 'pgConnectTimeoutMs'
  | 'pgStatementTimeoutMs'
  | 'replicaPollMs'
  | 'searchThreads'
  | 'searchLanguage'
  | 'workers'
  | 'lowBalanceThreshold'
  | 'embeddings'
>;

/** What ingested documents get their vectors from, when EMBEDDINGS_URL names a model. */
export function documentEmbeddingsOf(config: Pick<Config, 'embeddings'>): DocumentEmbeddings | undefined {
  return config.embeddings && new DocumentEmbeddings(embedderOf(config.embeddings), config.embeddings.maxChars);
}

export function postgresOptions(config: StoreConfig & { databaseUrl: string }): PostgresOptions {
  return {
    url: config.databaseUrl,
    poolMax: config.pgPoolMax,
    connectTimeoutMs: config.pgConnectTimeoutMs,
    statementTimeoutMs: config.pgStatementTimeoutMs,
    replicaPollMs: config.replicaPollMs,
    searchThreads: searchThreadsOf(config),
    lowBalanceThreshold: config.lowBalanceThreshold,
    embeddings: documentEmbeddingsOf(config),
    language: languageOf(config),
  };
}

/** SEARCH_LANGUAGE as the corpus analyses it (config.ts has refused a code not analysed here). */
function languageOf(config: StoreConfig): Language {
  return languageNamed(config.searchLanguage) ?? ENGLISH;
}

/**
 * The store the configuration names: PostgreSQL when DATABASE_URL is set (migrated on open), else
 * SQLite in DATA_DIR. A long-running PostgreSQL instance keeps its search replica in DATA_DIR/replica.
 */
export async function openStore(
  config: StoreConfig,
  options: { longRunning?: boolean; warn?: (message: string, error: unknown) => void } = {},
): Promise<Store> {
  if (config.databaseUrl !== undefined) {
    const replicaDir = options.longRunning ? join(config.dataDir, 'replica') : undefined;
    return PostgresStore.open({ ...postgresOptions({ ...config, databaseUrl: config.databaseUrl }), replicaDir, warn: options.warn });
  }
  return new SqliteStore(config.dataDir, {
    backgroundCheckpoints: options.longRunning,
    searchThreads: searchThreadsOf(config),
    lowBalanceThreshold: config.lowBalanceThreshold,
    warn: options.warn,
    embeddings: documentEmbeddingsOf(config),
    language: languageOf(config),
  });
}
