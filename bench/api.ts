// bench:api — throughput and latency of the free and billable paths against a bare Fastify route,
// measured in the same run. Server pinned to core 0, load generator (autocannon) to core 1.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SERVER_CORE = '0';

function pin(args: string[]): [string, string[]] {
  return cpus().length > 1 ? ['taskset', ['-c', SERVER_CORE, ...args]] : [args[0]!, args.slice(1)];
}

async function start(args: string[], env: Record<string, string>): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const [command, rest] = pin(args);
  const child = spawn(command, rest, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /listening on (\S+)/.exec(output);
      if (match) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    }, 20);
    child.once('exit', () => reject(new Error(output)));
  });
  return { url, child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

interface Figure {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(name: string, options: autocannon.Options): Promise<Figure> {
  const result = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, pipelining: 1, ...options });
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

async function main(): Promise<void> {
  if (cpus().length > 1) {
    // The load generator runs on the other core.
    spawn('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
  }
  const figures: Figure[] = [];

  const bare = await start([process.execPath, '--import', 'tsx', join(ROOT, 'bench/bare-server.ts')], {});
  await load('warm-up', { url: `${bare.url}/bare`, duration: 2 });
  figures.push(await load('bare Fastify JSON route', { url: `${bare.url}/bare` }));
  await stop(bare.child);

  const dataDir = mkdtempSync(join(tmpdir(), 'bench-api-'));
  try {
    const service = await start([process.execPath, join(ROOT, 'dist/cli/main.js'), 'serve'], {
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SEED_DEMO: 'true',
    });
    const key = /Demo API key[^:]*: ([0-9a-f]{64})/.exec(service.output())![1]!;
    await stop(service.child);
    // Enough credits that no request of the run meets a 402.
    const topUp = spawn(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'keys', 'topup', key, '--credits', '100000000'], {
      env: { ...process.env, DATA_DIR: dataDir },
      stdio: 'ignore',
    });
    await new Promise((resolve) => topUp.once('exit', resolve));
    const restarted = await start([process.execPath, join(ROOT, 'dist/cli/main.js'), 'serve'], {
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    const headers = { 'x-api-key': key };
    await load('warm-up', { url: `${restarted.url}/credits`, headers, duration: 2 });
    figures.push(await load('GET /credits (free, authenticated)', { url: `${restarted.url}/credits`, headers }));
    figures.push(
      await load('GET /document (billable)', { url: `${restarted.url}/document`, headers: { ...headers, 'svc-doc-id': 'eu-gdpr-art17' } }),
    );
    figures.push(
      await load('POST /query (billable, 3 words)', {
        url: `${restarted.url}/query`,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'personal data breach', top_k: 10 }),
      }),
    );
    await stop(restarted.child);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }

  const baseline = figures[0]!.requestsPerSecond;
  console.log(`\nbench:api  ${new Date().toISOString()}  ${cpus().length} cores (${cpus()[0]?.model})  node ${process.version}`);
  console.log(`${CONNECTIONS} connections, ${DURATION_S} s per run, server on core ${SERVER_CORE}, autocannon on the other\n`);
  console.log('| path | req/s | ratio to bare | p50 ms | p99 ms | non-2xx |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const figure of figures) {
    const ratio = (figure.requestsPerSecond / baseline).toFixed(2);
    console.log(`| ${figure.name} | ${figure.requestsPerSecond} | ${ratio} | ${figure.p50} | ${figure.p99} | ${figure.non2xx} |`);
  }
}

await main();
