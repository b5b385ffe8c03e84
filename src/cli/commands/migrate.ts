import type { Config } from '../../config.js';
import { postgresOptions } from '../../store/open.js';
import { PostgresStore } from '../../store/postgres-store.js';

export async function migrate(config: Config): Promise<{ store: string; applied: number[] }> {
  if (config.databaseUrl === undefined) return { store: 'sqlite', applied: [] };
  return { store: 'postgres', applied: await PostgresStore.migrate(postgresOptions({ ...config, databaseUrl: config.databaseUrl })) };
}
