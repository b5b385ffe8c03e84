import { Command, CommanderError } from 'commander';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { IngestError } from '../documents/ingest.js';
import { FaceEnginePool } from '../faces/engine/pool.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import { auditLedger } from './commands/audit.js';
import { startFaceService } from './commands/face-service.js';
import { enrollFaces } from './commands/faces/enroll.js';
import { listFaces } from './commands/faces/list.js';
import { removeFace } from './commands/faces/remove.js';
import { ingestFile } from './commands/ingest.js';
import { createKey } from './commands/keys/create.js';
import { listKeys } from './commands/keys/list.js';
import { setKeyRate } from './commands/keys/set-rate.js';
import { setKeyStatus } from './commands/keys/status.js';
import { topUpKey } from './commands/keys/topup.js';
import { keyUsage } from './commands/keys/usage.js';
import { migrate } from './commands/migrate.js';
import { serve } from './commands/serve.js';
import { CliError } from './errors.js';
import {
  renderAudit,
  renderCreatedKey,
  renderEnroll,
  renderFaceList,
  renderIngest,
  renderKey,
  renderKeyList,
  renderMigrations,
  renderUsage,
} from './render.js';

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is a terminal: progress lines are shown only there. */
  interactive: boolean;
}

/** Runs one command against the store the environment names; returns the process exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let config: Config | undefined;
  const getConfig = () => (config ??= loadConfig(io.env));

  async function withStore<T>(action: (store: Store) => Promise<T>): Promise<T> {
    const store = await openStore(getConfig());
    try {
      return await action(store);
    } finally {
      await store.close();
    }
  }

  function output<T>(json: boolean | undefined, result: T, render: (result: T) => string): void {
    io.stdout(`${json ? JSON.stringify(result, null, 2) : render(result)}\n`);
  }

  const program = new Command('metered-search')
    .description('Credit-metered search and document API: run the service and operate it.')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });

  program
    .command('serve')
    .description('Run the HTTP service (configured by environment variables, see README).')
    .option('--workers <n>', 'processes sharing the port (default: WORKERS, else 1)')
    .action(async (options: { workers?: string }) => {
      const config = getConfig();
      if (options.workers !== undefined) {
        if (!/^\d+$/.test(options.workers) || Number(options.workers) < 1) {
          throw new CliError(`--workers must be an integer >= 1, got "${options.workers}"`);
        }
        config.workers = Number(options.workers);
      }
      const result = await serve(config, (line) => io.stdout(`${line}\n`));
      if ('url' in result) io.stderr(`metered-search listening on ${result.url}\n`);
      else io.stderr(`metered-search listening on http://127.0.0.1:${result.port} with ${result.workers} workers\n`);
    });

  program
    .command('ingest')
    .description('Load documents from a JSONL file or a JSON array file; all or nothing.')
    .argument('<file>', 'JSONL (one document per line) or a JSON array')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const progress =
        io.interactive && !options.json ? (documents: number, rate: number) => io.stderr(`\r${documents} documents, ${rate} docs/s`) : undefined;
      const summary = await withStore((store) => ingestFile(store, file, progress));
      if (progress) io.stderr('\n');
      output(options.json, summary, renderIngest);
    });

  program
    .command('migrate')
    .description('Apply pending PostgreSQL schema migrations (serve also applies them on start).')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      output(options.json, await migrate(getConfig()), renderMigrations);
    });

  program
    .command('audit')
    .description('Check every key: credits granted - charges recorded = balance. Exits 1 on any difference.')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const report = await withStore(auditLedger);
      output(options.json, report, renderAudit);
      if (report.differences.length > 0) throw new CliError(`the ledger of ${report.differences.length} keys does not add up`, true);
      if (report.chargedTwice.length > 0) throw new CliError(`${report.chargedTwice.length} idempotent requests were charged more than once`, true);
    });

  program
    .command('face-service')
    .description('Serve the embedded face engine over HTTP, as the downstream FACE_SERVICE_URL names (PORT, HOST, FACE_WORKERS).')
    .action(async () => {
      const service = await startFaceService(getConfig());
      io.stderr(`metered-search face service listening on ${service.url}\n`);
      for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void service.close().then(() => process.exit(0)));
    });

  const faces = program.command('faces').description('The gallery of enrolled faces that /face/search searches.');
  faces
    .command('enroll')
    .description('Enroll the faces of a JSONL manifest: {"doc_id", "image" (file path or base64), "face_file", "attributes"?}; all or nothing.')
    .argument('<manifest>', 'JSONL file; image paths are relative to it')
    .option('--json', 'print the result as JSON')
    .action(async (manifest: string, options: { json?: boolean }) => {
      const engine = new FaceEnginePool(Math.max(1, getConfig().faceWorkers));
      try {
        await engine.ready;
        output(options.json, await withStore((store) => enrollFaces(store, engine, manifest)), renderEnroll);
      } finally {
        await engine.close();
      }
    });
  faces
    .command('list')
    .description('List the enrolled faces.')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      output(options.json, await withStore(listFaces), renderFaceList);
    });
  faces
    .command('remove')
    .description('Remove an enrolled face.')
    .argument('<doc-id>', 'the doc_id it was enrolled under')
    .option('--json', 'print the result as JSON')
    .action(async (docId: string, options: { json?: boolean }) => {
      output(options.json, await withStore((store) => removeFace(store, docId)), (result) => `Removed face ${result.removed}.`);
    });

  const keys = program.command('keys').description('Create and manage API keys.');
  keys
    .command('create')
    .description('Create a key; the plain key is printed once.')
    .requiredOption('--credits <n>', 'starting balance (integer >= 0)')
    .option('--name <name>', 'a label for the key')
    .option('--rate <n>', "requests per second for this key (default: the service's RATE_LIMIT_PER_S)")
    .option('--json', 'print the result as JSON')
    .action(async (options: { credits: string; name?: string; rate?: string; json?: boolean }) => {
      output(options.json, await withStore((store) => createKey(store, options)), renderCreatedKey);
    });
  keys
    .command('set-rate')
    .description('Set a key\'s rate limit in requests per second, or "default" for the service\'s RATE_LIMIT_PER_S.')
    .argument('<key-or-id>', 'the plain key or its id')
    .argument('<rate>', 'requests per second (integer >= 1), or "default"')
    .option('--json', 'print the result as JSON')
    .action(async (keyOrId: string, rate: string, options: { json?: boolean }) => {
      const key = await withStore((store) => setKeyRate(store, keyOrId, rate));
      output(options.json, key, (result) => renderKey(result, 'rate set'));
    });
  keys
    .command('topup')
    .description('Add credits to a key.')
    .argument('<key-or-id>', 'the plain key or its id')
    .requiredOption('--credits <n>', 'credits to add (integer >= 1)')
    .option('--json', 'print the result as JSON')
    .action(async (keyOrId: string, options: { credits: string; json?: boolean }) => {
      const key = await withStore((store) => topUpKey(store, keyOrId, options));
      output(options.json, key, (result) => renderKey(result, 'topped up'));
    });
  for (const [command, status, verb, description] of [
    ['revoke', 'revoked', 'revoked', 'Revoke a key permanently.'],
    ['disable', 'disabled', 'disabled', 'Disable a key (reversible with enable).'],
    ['enable', 'active', 'enabled', 'Enable a disabled key.'],
  ] as const) {
    keys
      .command(command)
      .description(description)
      .argument('<key-or-id>', 'the plain key or its id')
      .option('--json', 'print the result as JSON')
      .action(async (keyOrId: string, options: { json?: boolean }) => {
        const { key, changed } = await withStore((store) => setKeyStatus(store, keyOrId, status));
        output(options.json, { ...key, changed }, (result) => renderKey(result, changed ? verb : `was already ${verb}; nothing changed`));
      });
  }
  keys
    .command('list')
    .description('List keys (never the plain keys).')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      output(options.json, await withStore(listKeys), renderKeyList);
    });
  keys
    .command('usage')
    .description('Show credits granted, charges recorded and the most recent charges of a key.')
    .argument('<key-or-id>', 'the plain key or its id')
    .option('--limit <n>', 'how many recent charges to show', '20')
    .option('--json', 'print the result as JSON')
    .action(async (keyOrId: string, options: { limit?: string; json?: boolean }) => {
      output(options.json, await withStore((store) => keyUsage(store, keyOrId, options)), renderUsage);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const message = failureMessage(error);
    // With --json, a failure is JSON too, on stdout where the result would have been.
    if (argv.includes('--json') && !(error instanceof CliError && error.reported))
      io.stdout(`${JSON.stringify({ error: { message: message ?? String(error) } }, null, 2)}\n`);
    io.stderr(`error: ${message ?? (error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}

/** What went wrong, in the operator's terms; undefined for an unexpected fault (its stack is shown). */
function failureMessage(error: unknown): string | undefined {
  if (error instanceof IngestError) return `${error.message}\nNothing from this file was written.`;
  if (error instanceof CliError || error instanceof ConfigError) return error.message;
  const { code, path } = error as NodeJS.ErrnoException;
  if (code === 'ENOENT') return `The file ${path} does not exist.`;
  if (code === 'EACCES') return `The file ${path} cannot be read: permission denied.`;
  if (code === 'EISDIR') return `${path} is a folder, not a file.`;
  return undefined;
}
