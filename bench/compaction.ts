// bench:compaction — what re-ingesting a whole corpus does to the search index, in process: the
// corpus of bench:search (COMPACTION_SIZE documents, a million by default) is ingested, then
// ingested again in full, as a nightly refresh would. Every old version becomes a deleted
// document whose postings the index skips; past a quarter of the index the index is rebuilt
// without them in the background, while it serves. Printed: memory and 3-word search latency
// (one at a time, top_k 10) before the refresh, while the rebuild runs, and after (RSS after a full
// collection at the end of each phase, and the highest seen during it); the rebuild's
// duration and the longest the event loop waited for a search meanwhile. The "before" row is the
// baseline the others are compared with.
// Run with `node --expose-gc` (npm run bench:compaction does), so that memory is measured after a
// full collection.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyze } from '../src/services/search/analyzer.js';
import { readDocuments } from '../src/services/ingest.js';
import { SqliteCorpus } from '../src/store/sqlite-corpus.js';
import { machineLine } from './lib.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.COMPACTION_SIZE ?? 1_000_000);

function rssMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss / 2 ** 20;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

interface Row {
  phase: string;
  rssMiB: number;
  peakMiB: number;
  searches: number;
  p50: number;
  p99: number;
  max: number;
}

async function main(): Promise<void> {
  const vocabulary = words();
  const searches = queries(vocabulary, 3).map((text) => ({ terms: analyze(text), field: { kind: 'all' as const }, filters: [], topK: 10 }));
  const work = mkdtempSync(join(tmpdir(), 'bench-compaction-'));
  try {
    const file = join(work, 'corpus.jsonl');
    await writeCorpus(file, SIZE, vocabulary);
    const corpus = new SqliteCorpus(work);
    await corpus.ingestDocuments(await readDocuments(file));
    corpus.prepareSearch();
    const rows: Row[] = [];
    /** Searches one at a time until `until` says stop (after at least `rounds` passes over the queries). */
    const measure = async (phase: string, rounds: number, until: () => boolean = () => true) => {
      const latencies: number[] = [];
      let peakMiB = 0;
      for (let round = 0; round < rounds || !until(); round++) {
        peakMiB = Math.max(peakMiB, process.memoryUsage().rss / 2 ** 20);
        for (const search of searches) {
          const started = performance.now();
          await corpus.search(search);
          latencies.push(performance.now() - started);
          // The rebuild runs between searches, as it would between requests.
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      latencies.sort((a, b) => a - b);
      rows.push({ phase, rssMiB: rssMiB(), peakMiB, searches: latencies.length, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), max: latencies.at(-1)! });
    };
    await measure('before the refresh', 3);
    const stats = corpus.indexStatistics();
    console.log(`\n${machineLine('bench:compaction')}`);
    console.log(`${SIZE.toLocaleString('en')} documents; the refresh ingests all of them again (same doc_ids)\n`);
    const refreshStarted = performance.now();
    await corpus.ingestDocuments(await readDocuments(file));
    const refreshSeconds = (performance.now() - refreshStarted) / 1000;
    // The first search after the refresh brings the index level (every new version added, every
    // old one marked deleted) and starts the rebuild.
    const catchUpStarted = performance.now();
    const marked = corpus.indexStatistics();
    const catchUpSeconds = (performance.now() - catchUpStarted) / 1000;
    const rebuildStarted = performance.now();
    const rssWithDeleted = rssMiB();
    await measure('while the index is rebuilt', 1, () => !corpus.indexStatistics().compacting);
    const rebuildSeconds = (performance.now() - rebuildStarted) / 1000;
    await measure('after the rebuild', 3);
    const after = corpus.indexStatistics();
    corpus.close();

    console.log(
      `refresh ingest ${refreshSeconds.toFixed(1)} s; the next search caught up in ${catchUpSeconds.toFixed(1)} s: ` +
        `${marked.liveDocuments.toLocaleString('en')} live and ${marked.deletedDocuments.toLocaleString('en')} deleted documents in the index ` +
        `(RSS ${rssWithDeleted.toFixed(0)} MiB with both); rebuilt in the background in ${rebuildSeconds.toFixed(1)} s; ` +
        `after it ${after.liveDocuments.toLocaleString('en')} live, ${after.deletedDocuments.toLocaleString('en')} deleted ` +
        `(before the refresh ${stats.liveDocuments.toLocaleString('en')} live)\n`,
    );
    console.log('| phase | RSS at the end, MiB | ratio to before | highest RSS seen, MiB | searches | p50 ms | p99 ms | max ms | p99 ratio to before |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of rows) {
      console.log(
        `| ${row.phase} | ${row.rssMiB.toFixed(0)} | ${(row.rssMiB / rows[0]!.rssMiB).toFixed(2)} | ${row.peakMiB.toFixed(0)} | ${row.searches} | ` +
          `${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.max.toFixed(1)} | ${(row.p99 / rows[0]!.p99).toFixed(2)} |`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
