// bench:search — /query at 10k, 100k and 1M documents of a synthetic corpus with realistic
// statistics: a Zipf-distributed vocabulary (s = 1.07, 60,000 words), titles of 4-12 words, bodies
// of 120-400 words, metadata with a skewed jurisdiction, a category and a year. Per size: ingest
// documents/s (through the CLI), index size on disk, service start (the index is loaded before it
// listens), service RSS, and for 1-, 3- and 8-word queries (common words included), with and without
// a filter, 3-word match clauses on the title and on the text, and 3 rare words (searches that cost
// little, to show what the rest of a request costs under load): latency p50/p99 one query at a
// time, and throughput with p50/p99 under autocannon (50 connections), the throughput also as a
// ratio to a bare Fastify JSON route measured in the same run.
// The service runs with its defaults: at 10k documents searches run on the event loop; from 50k the
// index is split over search threads, one per core up to 4 (SEARCH_THREADS). Then the 3-word
// searches under load once more, each time one load run to warm up and then the one measured: with
// SEARCH_THREADS=1 (every search on the event loop), and with
// `serve --workers 2` (an index in each process), with the RSS of all its processes.
// SEARCH_SIZES=10000,100000 picks the sizes; SEARCH_SECONDS the length of each load run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { CLI, machineLine, memoryLatencyNs, processTree, ROOT, type Started, spreadOver, start, stop } from './lib.js';
import { queries, rareQueries, words, writeCorpus } from './synthetic-corpus.js';

const SIZES = (process.env.SEARCH_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const SECONDS = Number(process.env.SEARCH_SECONDS ?? 10);
const CONNECTIONS = 50;

function folderBytes(path: string): number {
  return readdirSync(path).reduce((sum, name) => sum + statSync(join(path, name)).size, 0);
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

async function load(url: string, requests?: autocannon.Request[]): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, ...(requests ? spreadOver(requests, CONNECTIONS) : {}) });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

/** Searches of title and text, or of one field through a match clause. */
type Field = 'title and text' | 'title' | 'text';

function queryRequests(
  vocabulary: string[],
  key: string,
  terms: number,
  filtered: boolean,
  field: Field = 'title and text',
  rare = false,
): autocannon.Request[] {
  return (rare ? rareQueries : queries)(vocabulary, terms).map((query) => ({
    method: 'POST' as const,
    path: '/query',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: field === 'title and text' ? query : { match: { [field]: query } },
      top_k: 10,
      ...(filtered ? { filters: { jurisdiction: 'EU' } } : {}),
    }),
  }));
}

/**
 * The rows measured per size: 1, 3 and 8 words with and without a filter, then 3 words in one
 * field, then 3 rare words: searches that cost little, so that row is about what the rest of a
 * request (HTTP, the key, the debit, the search threads' messages, the load generator) leaves.
 */
const ROWS: Array<{ terms: number; filtered: boolean; field: Field; rare?: boolean }> = [
  ...[1, 3, 8].flatMap((terms) => [false, true].map((filtered) => ({ terms, filtered, field: 'title and text' as const }))),
  { terms: 3, filtered: false, field: 'title' },
  { terms: 3, filtered: false, field: 'text' },
  { terms: 3, filtered: false, field: 'title and text', rare: true },
];

/** Resolves once every worker of a `serve --workers N` has said it listens (each loads its index first). */
async function allListening(service: Started, workers: number): Promise<void> {
  while ((service.output().match(/listening on/g) ?? []).length < workers + 1) await new Promise((resolve) => setTimeout(resolve, 100));
}

async function main(): Promise<void> {
  const vocabulary = words();
  const bare = await start([join(ROOT, 'bench/bare-server.mjs')], { PORT: '0' }, null);
  console.log(`\n${machineLine('bench:search')}  memory latency ${memoryLatencyNs().toFixed(0)} ns a load`);
  console.log(
    `autocannon, ${CONNECTIONS} connections, ${SECONDS} s per row; top_k 10; 200 distinct queries per row, cycled, each connection starting at its own place in them\n`,
  );
  for (const size of SIZES) {
    const work = mkdtempSync(join(tmpdir(), 'bench-search-'));
    try {
      const file = join(work, 'corpus.jsonl');
      await writeCorpus(file, size, vocabulary);
      const env = {
        DATA_DIR: join(work, 'data'),
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_S: '0',
        FACE_WORKERS: '0',
        SEED_DEMO: 'false',
      };
      const ingestStarted = performance.now();
      const summary = JSON.parse(
        execFileSync(process.execPath, [CLI, 'ingest', file, '--json'], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 20 }),
      ) as { seconds: number; documentsPerSecond: number };
      const ingestSeconds = (performance.now() - ingestStarted) / 1000;
      const key = JSON.parse(
        execFileSync(process.execPath, [CLI, 'keys', 'create', '--credits', '1000000000', '--json'], {
          env: { ...process.env, ...env },
          encoding: 'utf8',
        }),
      ).key as string;
      const indexMiB = folderBytes(env.DATA_DIR) / 1024 / 1024;
      const startedAt = performance.now();
      const service = await start([CLI, 'serve'], env, null);
      const startSeconds = (performance.now() - startedAt) / 1000;
      const baseline = await load(`${bare.url}/bare`);
      console.log(`### ${size.toLocaleString('en')} documents`);
      console.log(
        `ingest ${summary.documentsPerSecond} docs/s (CLI, whole file in one transaction, committed in ${summary.seconds.toFixed(1)} s; ` +
          `the process took ${ingestSeconds.toFixed(1)} s with start-up and SQLite's checkpoint of the WAL at close); ` +
          `data on disk ${indexMiB.toFixed(0)} MiB; service start with index load ${startSeconds.toFixed(1)} s; bare route ${baseline.rps} req/s (p99 ${baseline.p99} ms)\n`,
      );
      console.log(
        '| query | field | filter | one at a time p50 ms | one at a time p99 ms | 50 connections req/s | ratio to bare | p50 ms | p99 ms | errors and timeouts |',
      );
      console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|');
      let peakRss = rssMiB(service.child.pid!);
      for (const { terms, filtered, field, rare } of ROWS) {
        const requests = queryRequests(vocabulary, key, terms, filtered, field, rare);
        // One at a time, from a client process of its own: every query twice, timing the second
        // pass (the first warms caches and the JIT).
        const requestsFile = join(work, 'requests.json');
        writeFileSync(requestsFile, JSON.stringify(requests));
        const alone = JSON.parse(
          execFileSync(process.execPath, [join(ROOT, 'bench/sequential-client.mjs'), service.url, requestsFile, '2'], { encoding: 'utf8' }),
        ) as number[];
        alone.sort((a, b) => a - b);
        const percentile = (fraction: number) => alone[Math.min(alone.length - 1, Math.floor(fraction * alone.length))].toFixed(1);
        const result = await load(`${service.url}/query`, requests);
        peakRss = Math.max(peakRss, rssMiB(service.child.pid!));
        console.log(
          `| ${terms}${rare ? ' rare' : ''} word${terms > 1 ? 's' : ''} | ${field} | ${filtered ? 'jurisdiction = EU' : '-'} | ${percentile(0.5)} | ${percentile(0.99)} | ` +
            `${result.rps} | ${(result.rps / baseline.rps).toFixed(3)} | ${result.p50} | ${result.p99} | ${result.errors} |`,
        );
      }
      console.log(`\nservice RSS after the runs: ${peakRss.toFixed(0)} MiB\n`);
      await stop(service.child);
      const workers = await start([CLI, 'serve', '--workers', '2'], env, null);
      await allListening(workers, 2);
      // Warmed up as the single process was by the rows before: a first run straight after start
      // measured 939 req/s, the next 1,179.
      const threeWords = queryRequests(vocabulary, key, 3, false);
      await load(`${workers.url}/query`, threeWords);
      const both = await load(`${workers.url}/query`, threeWords);
      const workersRss = processTree(workers.child.pid!).reduce((sum, pid) => sum + rssMiB(pid), 0);
      console.log(
        `3 words, serve --workers 2 (both cores, an index per process): ${both.rps} req/s, ratio to bare ${(both.rps / baseline.rps).toFixed(3)}, ` +
          `p50 ${both.p50} ms, p99 ${both.p99} ms, errors ${both.errors}; RSS of all its processes ${workersRss.toFixed(0)} MiB\n`,
      );
      await stop(workers.child);
      const eventLoop = await start([CLI, 'serve'], { ...env, SEARCH_THREADS: '1' }, null);
      await load(`${eventLoop.url}/query`, threeWords);
      const alone = await load(`${eventLoop.url}/query`, threeWords);
      console.log(
        `3 words, SEARCH_THREADS=1 (searches on the event loop): ${alone.rps} req/s, ratio to bare ${(alone.rps / baseline.rps).toFixed(3)}, ` +
          `p50 ${alone.p50} ms, p99 ${alone.p99} ms, errors ${alone.errors}; RSS ${rssMiB(eventLoop.child.pid!).toFixed(0)} MiB\n`,
      );
      await stop(eventLoop.child);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  await stop(bare.child);
}

await main();
