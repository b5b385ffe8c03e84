import cluster from 'node:cluster';
import type { Command } from 'commander';
import type { Config } from '../../config.js';
import { startServer } from '../../server.js';
import { seedDemo } from '../../services/demo.js';
import { openStore } from '../../store/open.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';

export function serveCommand(program: Command, cli: CliContext): void {
  program
    .command('serve')
    .description('Run the HTTP service (configured by environment variables, see README).')
    .option('--workers <n>', 'processes sharing the port (default: WORKERS, else 1)')
    .action(async (options: { workers?: string }) => {
      const config = cli.config();
      if (options.workers !== undefined) config.workers = parseWorkers(options.workers);
      cli.exitCode = config.workers <= 1 || !cluster.isPrimary ? await serveOne(config, cli) : await serveCluster(config, cli);
    });
}

function parseWorkers(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new CliError(`--workers must be an integer >= 1, got "${raw}"`);
  return Number(raw);
}

/**
 * Opens the store once (applying any migrations) and, on the first start with an empty embedded
 * store, loads the demo corpus and creates a demo key, announced once. Never on PostgreSQL: the
 * demo belongs to a newcomer's embedded store, not to a shared database.
 */
async function prepareStore(config: Config, cli: CliContext): Promise<void> {
  const store = await openStore(config);
  try {
    const seeded = config.seedDemo && store.kind === 'sqlite' ? await seedDemo(store) : undefined;
    if (!seeded) return;
    cli.io.stdout(
      `\nFirst start: loaded ${seeded.documents} demo documents and created a demo key with ${seeded.credits} credits.\n` +
        `Demo API key (shown once, keep it): ${seeded.key}\n\n`,
    );
  } finally {
    await store.close();
  }
}

/** One process: serves until SIGTERM or SIGINT, then finishes the requests in flight and closes. */
async function serveOne(config: Config, cli: CliContext): Promise<number> {
  // Listened for from the start: a signal during start-up stops the service once it is up.
  const stopSignal = cli.untilStopSignal();
  if (cluster.isPrimary && config.seedDemo && config.databaseUrl === undefined) await prepareStore(config, cli);
  const server = await startServer(config, { listenWhenReady: cluster.isWorker });
  cli.io.stderr(`metered-search listening on ${server.url}\n`);
  if (server.adminUrl) cli.io.stderr(`metered-search admin API listening on ${server.adminUrl}\n`);
  cli.io.stderr(
    `console: ${server.adminUrl ?? server.url}/console (sign in with a token from: npx metered-search admin tokens create --name NAME)\n`,
  );
  const signal = await stopSignal;
  server.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
  try {
    await server.close();
    return 0;
  } catch (error) {
    server.app.log.error({ err: error }, 'shutdown failed');
    return 1;
  }
}

/**
 * A cluster: this process prepares the store (migrations, the demo on a first start), forks the
 * workers, which share the listening socket, replaces a worker that dies, and on SIGTERM or SIGINT
 * passes the signal on and waits for all of them.
 */
async function serveCluster(config: Config, cli: CliContext): Promise<number> {
  const stopSignal = cli.untilStopSignal();
  await prepareStore(config, cli);
  let stopping = false;
  const fork = () => cluster.fork({ WORKERS: '1', SEED_DEMO: 'false' });
  const allExited = new Promise<void>((resolve) => {
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) {
        // Dead, not gone: a worker that exits may still be listed until its channel is closed too.
        if (Object.values(cluster.workers ?? {}).every((listed) => !listed || listed.isDead())) resolve();
        return;
      }
      cli.io.stdout(`worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
      setTimeout(fork, 500);
    });
  });
  const listening = new Promise<number>((resolve) => cluster.once('listening', (_worker, address) => resolve(address.port)));
  for (let index = 0; index < config.workers; index++) fork();
  cli.io.stderr(`metered-search listening on http://127.0.0.1:${await listening} with ${config.workers} workers\n`);
  const signal = await stopSignal;
  stopping = true;
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  await allExited;
  return 0;
}
