import cluster from 'node:cluster';
import type { Config } from '../../config.js';
import { startServer } from '../../server.js';
import { seedDemo } from '../../services/demo.js';
import { openStore } from '../../store/open.js';

export type ServeResult = { url: string } | { workers: number; port: number };

/**
 * One process, or with `workers` > 1 a cluster: the primary prepares the store (migrations, the
 * demo on a first start), forks the workers, which share the listening socket, replaces a worker
 * that dies, and on SIGTERM or SIGINT passes the signal on and waits for all of them.
 */
export async function serve(config: Config, announce: (line: string) => void): Promise<ServeResult> {
  if (config.workers <= 1 || !cluster.isPrimary) {
    const server = await startServer(config, { handleSignals: true });
    return { url: server.url };
  }
  const store = await openStore(config);
  try {
    const seeded = config.seedDemo && store.kind === 'sqlite' ? await seedDemo(store) : undefined;
    if (seeded) {
      announce(
        `First start: loaded ${seeded.documents} demo documents and created a demo key with ${seeded.credits} credits.\n` +
          `Demo API key (shown once, keep it): ${seeded.key}`,
      );
    }
  } finally {
    await store.close();
  }

  let stopping = false;
  const fork = () => cluster.fork({ WORKERS: '1', SEED_DEMO: 'false' });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    announce(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    setTimeout(fork, 500);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
    });
  }
  const listening = new Promise<number>((resolve) => cluster.once('listening', (_worker, address) => resolve(address.port)));
  for (let index = 0; index < config.workers; index++) fork();
  return { workers: config.workers, port: await listening };
}
