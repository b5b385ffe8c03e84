// bench:search-load-compare — this build's /query under load against another build's, over HTTP.
// Both builds' services run at once over one data folder (the idle one costs nothing), and load
// runs of LOAD_SECONDS (default 10) at 50 connections alternate between them, which one goes first
// alternating by round, so the machine's drift falls on both alike: on the 2-core machines here one
// build's 3-word runs at 1M measured 1,245-1,982 requests/s within minutes, more than
// most changes move it. bench:search-compare judges results and time in one process; this judges
// what reaches a client through HTTP, the search threads and the cores shared with the load.
//
//   BASE=/path/to/other/checkout DATA_DIR=/path/to/data npm run bench:search-load-compare
//
// BASE: a checkout with `dist/` built (see bench/search-compare.ts). DATA_DIR: a data folder
// ingested by either build (both read it; a key with credits is created in it). LOAD_TERMS: words
// per query, 1, 3 (default) or 8, from bench:search's query sets. LOAD_ROUNDS: rounds (default 6).
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { CLI, machineLine, spreadOver, start, stop } from './lib.js';
import { queries, words } from './synthetic-corpus.js';

const CONNECTIONS = 50;
const TERMS = Number(process.env.LOAD_TERMS ?? 3);
const ROUNDS = Number(process.env.LOAD_ROUNDS ?? 6);
const SECONDS = Number(process.env.LOAD_SECONDS ?? 10);

interface Run {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(url: string, requests: autocannon.Request[], seconds: number): Promise<Run> {
  const result = await autocannon({ url: `${url}/query`, connections: CONNECTIONS, duration: seconds, ...spreadOver(requests, CONNECTIONS) });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR;
  if (!process.env.BASE || !dataDir) {
    console.error('BASE=/path/to/other/checkout and DATA_DIR=/path/to/data are required; see the head of bench/search-load-compare.ts');
    process.exit(2);
  }
  const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_S: '0', FACE_WORKERS: '0', SEED_DEMO: 'false' };
  const key = JSON.parse(
    execFileSync(process.execPath, [CLI, 'keys', 'create', '--credits', '1000000000', '--json'], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    }),
  ).key as string;
  const requests = queries(words(), TERMS).map((query) => ({
    method: 'POST' as const,
    path: '/query',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ query, top_k: 10 }),
  }));
  const builds = [
    { name: 'base', cli: join(resolve(process.env.BASE), 'dist/cli/main.js') },
    { name: 'this', cli: CLI },
  ];
  const services = [];
  for (const build of builds) services.push(await start([build.cli, 'serve'], env, null));
  try {
    console.log(`\n${machineLine('bench:search-load-compare')}`);
    console.log(
      `base ${resolve(process.env.BASE)} against this checkout, data ${dataDir}; ${TERMS}-word queries, ${CONNECTIONS} connections, ${SECONDS} s a run\n`,
    );
    // One run each to warm up (JIT, caches, the search threads' first bounds), not counted.
    for (const service of services) await load(service.url, requests, Math.min(5, SECONDS));
    const runs: Run[][] = [[], []];
    console.log('| round | build | req/s | p50 ms | p99 ms | errors and timeouts |\n|---:|---|---:|---:|---:|---:|');
    for (let round = 1; round <= ROUNDS; round++) {
      for (const which of round % 2 === 1 ? [0, 1] : [1, 0]) {
        const run = await load(services[which].url, requests, SECONDS);
        runs[which].push(run);
        console.log(`| ${round} | ${builds[which].name} | ${run.rps} | ${run.p50} | ${run.p99} | ${run.errors} |`);
      }
    }
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const [base, current] = runs.map((list) => ({ rps: mean(list.map((run) => run.rps)), p99: mean(list.map((run) => run.p99)) }));
    console.log(
      `\nmean: base ${base!.rps.toFixed(0)} req/s (p99 ${base!.p99.toFixed(1)} ms), this ${current!.rps.toFixed(0)} req/s (p99 ${current!.p99.toFixed(1)} ms); this / base ${(current!.rps / base!.rps).toFixed(3)}`,
    );
    if (runs.flat().some((run) => run.errors > 0)) process.exitCode = 1;
  } finally {
    for (const service of services) await stop(service.child);
  }
}

await main();
