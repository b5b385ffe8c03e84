// bench:vectors — the service's vector index (usearch HNSW, int8) beside LanceDB's (IVF_HNSW_SQ,
// int8 too), on VECTORS_SIZE random-but-clustered vectors of 384 dimensions (default 1,000,000),
// in one run: build time, memory (the RSS of a process holding the index, bytes on disk), and
// recall@10 against exact search of the same float vectors over VECTORS_QUERIES queries (default
// 200), with query p50 and p99 on one thread at each search setting. Each engine's settings are
// swept, twice, alternated, so that times compare at equal recall: the line "at equal recall" pairs
// the cheapest setting of each reaching 0.95. usearch's refined settings rank the best candidates
// again by exact cosine from float vectors in SQLite, as the service does.
//
//   npm run bench:vectors
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type ExactVectors, REFINE_FACTOR, VECTOR_SETTINGS, VectorIndex } from '../src/search/vector-index.js';
import { buildLanceDb, lanceNearest } from './lancedb-vectors.js';
import { machineLine, median, ROOT } from './lib.js';
import { CLUSTERS, clusteredVectors, DIMENSIONS, exactNearest, K } from './vector-data.js';

const SIZE = Number(process.env.VECTORS_SIZE ?? 1_000_000);
const QUERIES = Number(process.env.VECTORS_QUERIES ?? 200);
const TARGET_RECALL = 0.95;

interface Sweep {
  setting: string;
  recall: number;
  p50Ms: number;
  p99Ms: number;
}

/** Each query's time once warmed (every query is run once first, unmeasured), and recall@K of its answer. */
async function timeQueries(queries: Float32Array, truth: number[][], search: (query: Float32Array) => Promise<number[]> | number[]) {
  const times: number[] = [];
  let found = 0;
  for (let q = 0; q < truth.length; q++) await search(queries.subarray(q * DIMENSIONS, (q + 1) * DIMENSIONS));
  for (let q = 0; q < truth.length; q++) {
    const started = performance.now();
    const rows = await search(queries.subarray(q * DIMENSIONS, (q + 1) * DIMENSIONS));
    times.push(performance.now() - started);
    const expected = new Set(truth[q]);
    found += rows.slice(0, K).filter((row) => expected.has(row)).length;
  }
  return { times, recall: found / (truth.length * K) };
}

function rssMb(): number {
  return process.memoryUsage().rss / 2 ** 20;
}

/** What a process that loads the index from disk holds, RSS after less before, measured in a process of its own. */
function loadedRssMb(path: string): number {
  const script = `import { VectorIndex } from ${JSON.stringify(join(ROOT, 'src/search/vector-index.ts'))};
    const before = process.memoryUsage().rss; VectorIndex.load(${JSON.stringify(path)}, ${DIMENSIONS});
    console.log((process.memoryUsage().rss - before) / 2 ** 20);`;
  const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  return Number(output.trim());
}

async function buildUsearch(vectors: Float32Array, dir: string): Promise<string> {
  const before = rssMb();
  const started = performance.now();
  const index = new VectorIndex(DIMENSIONS);
  index.add(
    Array.from({ length: SIZE }, (_, row) => row),
    vectors,
    2,
  );
  const buildS = (performance.now() - started) / 1000;
  const grownMb = rssMb() - before;
  const path = join(dir, 'usearch.index');
  index.save(path);
  const loadStarted = performance.now();
  VectorIndex.load(path, DIMENSIONS);
  const loadS = (performance.now() - loadStarted) / 1000;
  console.log(
    `usearch: built in ${buildS.toFixed(1)} s on 2 threads (RSS grew ${grownMb.toFixed(0)} MB while building); ${(statSync(path).size / 2 ** 20).toFixed(0)} MB on disk; read back in ${loadS.toFixed(2)} s, holding ${loadedRssMb(path).toFixed(0)} MB RSS`,
  );
  return path;
}

/**
 * The float vectors in a SQLite table, as the service keeps them (the corpus's embeddings): what a
 * refined search reads its candidates' exact vectors from.
 */
function floatStore(vectors: Float32Array, dir: string): ExactVectors {
  const db = new Database(join(dir, 'vectors.sqlite'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE vectors (id INTEGER PRIMARY KEY, vector BLOB NOT NULL)');
  const insert = db.prepare('INSERT INTO vectors (id, vector) VALUES (?, ?)');
  db.transaction(() => {
    for (let row = 0; row < SIZE; row++) insert.run(row, Buffer.from(vectors.buffer, row * DIMENSIONS * 4, DIMENSIONS * 4));
  })();
  const read = db.prepare('SELECT vector FROM vectors WHERE id = ?').pluck();
  return (rowids) =>
    rowids.map((rowid) => {
      const blob = read.get(rowid) as Buffer | undefined;
      return blob && new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
    });
}

function cheapestReaching(sweeps: Sweep[]): Sweep | undefined {
  return sweeps.filter((sweep) => sweep.recall >= TARGET_RECALL).sort((a, b) => a.p50Ms - b.p50Ms)[0];
}

async function main(): Promise<void> {
  console.log(machineLine('bench:vectors'));
  console.log(`${SIZE.toLocaleString('en')} vectors of ${DIMENSIONS} dimensions around ${CLUSTERS} centres; ${QUERIES} queries, top ${K}`);
  const vectors = clusteredVectors(SIZE, 1);
  const queries = clusteredVectors(QUERIES, 2);
  const exactStarted = performance.now();
  const truth = exactNearest(vectors, queries);
  console.log(`exact search of every query: ${((performance.now() - exactStarted) / 1000).toFixed(1)} s`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-vectors-'));
  try {
    const path = await buildUsearch(vectors, dir);
    const exact = floatStore(vectors, dir);
    const lance = await buildLanceDb(vectors, DIMENSIONS, dir);
    console.log(
      `LanceDB IVF_HNSW_SQ: written and indexed in ${lance.seconds.toFixed(1)} s; RSS grew ${lance.rssGrowthMb.toFixed(0)} MB; ${lance.diskMb.toFixed(0)} MB on disk`,
    );
    // Every setting of both engines, then all of them again: drift over the run falls on both alike.
    const settings: Array<{ engine: string; setting: string; search: (query: Float32Array) => Promise<number[]> | number[] }> = [];
    for (const [searchExpansion, reranked] of [
      [64, 0],
      [64, K],
      [128, K],
      [128, 2 * K],
      [256, K],
      [256, 2 * K],
    ]) {
      const index = VectorIndex.load(path, DIMENSIONS, { ...VECTOR_SETTINGS, searchExpansion });
      settings.push({
        engine: 'usearch',
        setting: `expansion ${searchExpansion}${reranked ? `, best ${reranked * REFINE_FACTOR} reranked` : ''}`,
        search: (query) => (reranked ? index.nearest(query, K, exact, reranked) : index.nearest(query, K)).map((match) => match.rowid),
      });
    }
    for (const ef of [64, 128, 192, 256, 384]) {
      settings.push({
        engine: 'LanceDB',
        setting: `ef ${ef}`,
        search: (query) => lanceNearest(lance.table, query, K, ef),
      });
    }
    const sweeps = new Map<string, Sweep & { engine: string; times: number[] }>();
    for (let round = 0; round < 2; round++) {
      for (const { engine, setting, search } of settings) {
        const { times, recall } = await timeQueries(queries, truth, search);
        const entry = sweeps.get(`${engine} ${setting}`) ?? { engine, setting, recall, p50Ms: 0, p99Ms: 0, times: [] };
        entry.times.push(...times);
        sweeps.set(`${engine} ${setting}`, entry);
      }
    }
    for (const entry of sweeps.values()) {
      const sorted = [...entry.times].sort((x, y) => x - y);
      entry.p50Ms = median(sorted);
      entry.p99Ms = sorted[Math.floor(sorted.length * 0.99)];
      console.log(
        `  ${entry.engine.padEnd(8)} ${entry.setting.padEnd(34)} recall@10 ${entry.recall.toFixed(3)}  p50 ${entry.p50Ms.toFixed(3)} ms  p99 ${entry.p99Ms.toFixed(3)} ms`,
      );
    }
    const ours = [...sweeps.values()].filter((entry) => entry.engine === 'usearch');
    const theirs = [...sweeps.values()].filter((entry) => entry.engine === 'LanceDB');
    const [a, b] = [cheapestReaching(ours), cheapestReaching(theirs)];
    if (a && b) {
      console.log(
        `at equal recall (>= ${TARGET_RECALL}): usearch ${a.setting} ${a.p50Ms.toFixed(3)} ms p50, LanceDB ${b.setting} ${b.p50Ms.toFixed(3)} ms: ratio ${(a.p50Ms / b.p50Ms).toFixed(2)} (target <= 0.5); p99 ratio ${(a.p99Ms / b.p99Ms).toFixed(2)}`,
      );
    } else console.log(`one engine did not reach recall ${TARGET_RECALL} at any setting swept`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
