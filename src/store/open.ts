import type { Config } from '../config.js';
import { ConfigError } from '../config.js';
import { SqliteStore } from './sqlite.js';
import type { Store } from './store.js';

/** The store the configuration names: PostgreSQL when DATABASE_URL is set, else SQLite in DATA_DIR. */
export function openStore(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Store {
  if (config.databaseUrl !== undefined) {
    throw new ConfigError(
      'DATABASE_URL is set, but this build has no PostgreSQL store yet. Unset DATABASE_URL to use the embedded store in DATA_DIR.',
    );
  }
  return new SqliteStore(config.dataDir);
}
