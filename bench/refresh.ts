// bench:refresh — a running service's search index while its whole corpus is ingested again, as a
// nightly refresh would: the corpus of bench:search (REFRESH_SIZE documents, a million by default)
// is ingested by the CLI and searched here (the store's corpus in this process, as in the service),
// then ingested again in full (same doc_ids) by the CLI. That is two million changes since the index
// last looked, too many to catch up with on the event loop, so the next search starts building a
// new index in the background and the old one serves meanwhile. Uses dist/ (npm run build first).
// Printed: how long the first search after the refresh took, how long the new index took to take
// over, and per phase (before the refresh, while the new index is built, after) the 3-word search
// latency one at a time (top_k 10, after a warm-up pass) and memory: RSS and the array buffers
// (where the index lives) after a full collection and 1.5 s more, in which the service hands what
// was freed back to the system (src/search/engine/threads/release-memory.ts), and the highest RSS seen. The "before" row
// is the baseline the others are compared with. The corpus searches as the service would with this
// environment: split over SEARCH_THREADS threads (by default one per core, up to 4).
// Run with `node --expose-gc` (npm run bench:refresh does).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, searchThreadsOf } from '../src/config.js';
import { INDEX_UPKEEP, SqliteCorpus } from '../src/corpus/sqlite-corpus.js';
import { analyze } from '../src/search/analyzer.js';
import { CLI, machineLine } from './lib.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.REFRESH_SIZE ?? 1_000_000);
const searchThreads = searchThreadsOf(loadConfig());

/** Memory after a full collection, once the service has given freed memory back (src/search/engine/threads/release-memory.ts). */
async function collectedMemory(): Promise<{ rssMiB: number; arrayBuffersMiB: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const { rss, arrayBuffers } = process.memoryUsage();
  return { rssMiB: rss / 2 ** 20, arrayBuffersMiB: arrayBuffers / 2 ** 20 };
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

interface Row {
  phase: string;
  rssMiB: number;
  arrayBuffersMiB: number;
  peakMiB: number;
  searches: number;
  p50: number;
  p99: number;
  max: number;
}

async function main(): Promise<void> {
  const vocabulary = words();
  const searches = queries(vocabulary, 3).map((text) => ({ terms: analyze(text), field: { kind: 'all' as const }, filters: [], topK: 10 }));
  const work = mkdtempSync(join(tmpdir(), 'bench-refresh-'));
  try {
    const file = join(work, 'corpus.jsonl');
    await writeCorpus(file, SIZE, vocabulary);
    const ingest = () =>
      execFileSync(process.execPath, [CLI, 'ingest', file, '--json'], {
        env: { ...process.env, DATA_DIR: work, LOG_LEVEL: 'warn', SEED_DEMO: 'false' },
      });
    ingest();
    const corpus = new SqliteCorpus(work, { ...INDEX_UPKEEP, searchThreads });
    await corpus.prepareSearch();
    const rows: Row[] = [];
    const pass = async (latencies: number[]) => {
      for (const search of searches) {
        const started = performance.now();
        await corpus.search(search);
        latencies.push(performance.now() - started);
        // Background work runs between searches, as it would between requests.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    /** Searches one at a time: `passes` over the queries, or until `done` says so. */
    const measure = async (phase: string, passes: number, done: () => boolean = () => true) => {
      const latencies: number[] = [];
      let peakMiB = 0;
      for (let round = 0; round < passes || !done(); round++) {
        peakMiB = Math.max(peakMiB, process.memoryUsage().rss / 2 ** 20);
        await pass(latencies);
      }
      latencies.sort((a, b) => a - b);
      rows.push({
        phase,
        ...(await collectedMemory()),
        peakMiB,
        searches: latencies.length,
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        max: latencies.at(-1)!,
      });
    };
    await pass([]);
    await measure('before the refresh', 2);
    console.log(`\n${machineLine('bench:refresh')}`);
    console.log(
      `${SIZE.toLocaleString('en')} documents, all ingested again (same doc_ids) while the index serves; ${searchThreads} search thread(s)\n`,
    );
    const refreshStarted = performance.now();
    ingest();
    const refreshSeconds = (performance.now() - refreshStarted) / 1000;
    // Another process's commit is noticed through inotify.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const firstStarted = performance.now();
    const first = corpus.indexStatistics();
    const firstSeconds = (performance.now() - firstStarted) / 1000;
    const rebuildStarted = performance.now();
    await measure('while the new index is built', 1, () => !corpus.indexStatistics().rebuilding);
    const rebuildSeconds = (performance.now() - rebuildStarted) / 1000;
    await pass([]);
    await measure('after', 2);
    const after = corpus.indexStatistics();
    await corpus.close();

    console.log(
      `refresh ingest (CLI, another process) ${refreshSeconds.toFixed(1)} s; the first search after it took ${(firstSeconds * 1000).toFixed(0)} ms ` +
        `(index rebuilding: ${first.rebuilding}); the new index took over ${rebuildSeconds.toFixed(1)} s later, ` +
        `holding ${after.liveDocuments.toLocaleString('en')} live and ${after.deletedDocuments.toLocaleString('en')} deleted documents\n`,
    );
    console.log(
      '| phase | RSS MiB | ratio to before | array buffers MiB | highest RSS seen MiB | searches | p50 ms | p99 ms | max ms | p99 ratio to before |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of rows) {
      console.log(
        `| ${row.phase} | ${row.rssMiB.toFixed(0)} | ${(row.rssMiB / rows[0].rssMiB).toFixed(2)} | ${row.arrayBuffersMiB.toFixed(0)} | ` +
          `${row.peakMiB.toFixed(0)} | ${row.searches} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.max.toFixed(1)} | ${(row.p99 / rows[0].p99).toFixed(2)} |`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
