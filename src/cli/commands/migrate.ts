import type { Command } from 'commander';
import type { Config } from '../../config.js';
import { postgresOptions } from '../../store/open.js';
import { PostgresStore } from '../../store/postgres-store.js';
import type { CliContext } from '../context.js';

export function migrateCommand(program: Command, cli: CliContext): void {
  program
    .command('migrate')
    .description('Apply pending PostgreSQL schema migrations (serve also applies them on start).')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      cli.output(options.json, await migrate(cli.config()), renderMigrations);
    });
}

export async function migrate(config: Config): Promise<{ store: string; applied: number[] }> {
  if (config.databaseUrl === undefined) return { store: 'sqlite', applied: [] };
  return { store: 'postgres', applied: await PostgresStore.migrate(postgresOptions({ ...config, databaseUrl: config.databaseUrl })) };
}

export function renderMigrations(result: { store: string; applied: number[] }): string {
  if (result.store !== 'postgres') return 'The embedded store migrates itself when opened; nothing to do.';
  return result.applied.length === 0 ? 'The database schema is up to date.' : `Applied migrations: ${result.applied.join(', ')}.`;
}
