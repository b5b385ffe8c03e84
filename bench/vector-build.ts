// bench:vector-build — where building the vector index goes, and what the graph's settings trade:
// VECTOR_BUILD_SIZE clustered 384-dimension vectors (default 200,000; bench:vectors' kind), added
// to usearch's HNSW (int8) in the service's steps of 20,000 on 1 thread and on every core, at the
// service's settings and at fewer candidates while adding (expansion_add) or fewer links
// (connectivity); beside LanceDB's IVF_HNSW_SQ build of the same vectors in the same run. Each
// build's seconds, its ratio to LanceDB's, and recall@10 of 200 queries with their p50 at the
// service's search (expansion 128, best 40 reranked by exact cosine) and wider ones (256, 512);
// LanceDB's at ef 128 and 256.
// VECTOR_BUILD_VARIANTS (say "2,4") runs only those usearch rows, by position from 0;
// VECTOR_BUILD_LANCEDB=0 leaves LanceDB out.
//
//   npm run bench:vector-build
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { int8Of, REFINE_FACTOR, VECTOR_SETTINGS, VectorIndex, type VectorSettings } from '../src/search/vector-index.js';
import { buildLanceDb, lanceNearest } from './lancedb-vectors.js';
import { machineLine, median } from './lib.js';
import { clusteredVectors, DIMENSIONS, exactNearest, K } from './vector-data.js';

const SIZE = Number(process.env.VECTOR_BUILD_SIZE ?? 200_000);
const QUERIES = 200;
const STEP = 20_000;
/** The service's search expansion, then wider ones: what a graph built with fewer candidates needs to find as much. */
const SEARCH_EXPANSIONS = [VECTOR_SETTINGS.searchExpansion, 256, 512];

function build(vectors: Float32Array, settings: VectorSettings, threads: number): { index: VectorIndex; seconds: number } {
  const index = new VectorIndex(DIMENSIONS, settings);
  const rowids = Array.from({ length: SIZE }, (_, row) => row + 1);
  const started = performance.now();
  for (let start = 0; start < SIZE; start += STEP) {
    const end = Math.min(SIZE, start + STEP);
    index.add(rowids.slice(start, end), vectors.subarray(start * DIMENSIONS, end * DIMENSIONS), threads);
  }
  return { index, seconds: (performance.now() - started) / 1000 };
}

/** What of a build is the vectors' quantisation to int8, done in the same steps on this thread. */
function quantisingSeconds(vectors: Float32Array): number {
  const started = performance.now();
  for (let start = 0; start < SIZE; start += STEP)
    int8Of(vectors.subarray(start * DIMENSIONS, Math.min(SIZE, start + STEP) * DIMENSIONS), DIMENSIONS);
  return (performance.now() - started) / 1000;
}

async function recall(nearest: (query: Float32Array) => Promise<number[]> | number[], queries: Float32Array, truth: number[][]): Promise<number> {
  let found = 0;
  for (let query = 0; query < QUERIES; query++) {
    const wanted = new Set(truth[query]);
    found += (await nearest(queries.subarray(query * DIMENSIONS, (query + 1) * DIMENSIONS))).filter((row) => wanted.has(row)).length;
  }
  return found / (QUERIES * K);
}

/** Recall@10 and p50 ms of the index searched at `expansion`: saved and read back with it, as usearch sets it only when an index is made. */
async function searchedAt(
  index: VectorIndex,
  settings: VectorSettings,
  expansion: number,
  vectors: Float32Array,
  queries: Float32Array,
  truth: number[][],
) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-vector-build-'));
  try {
    index.save(join(dir, 'usearch.index'));
    const searched = VectorIndex.load(join(dir, 'usearch.index'), DIMENSIONS, { ...settings, searchExpansion: expansion });
    const nearest = usearchNearest(searched, vectors);
    const times: number[] = [];
    const timed = (query: Float32Array) => {
      const started = performance.now();
      const found = nearest(query);
      times.push(performance.now() - started);
      return found;
    };
    const found = await recall(timed, queries, truth);
    return { recall: found, p50Ms: median(times.sort((a, b) => a - b)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function usearchNearest(index: VectorIndex, vectors: Float32Array): (query: Float32Array) => number[] {
  const exact = (rowids: readonly number[]) => rowids.map((rowid) => vectors.subarray((rowid - 1) * DIMENSIONS, rowid * DIMENSIONS));
  return (query) => index.nearest(query, K, exact, K).map((match) => match.rowid - 1);
}

async function main(): Promise<void> {
  console.log(machineLine('bench:vector-build'));
  const vectors = clusteredVectors(SIZE, 1);
  const queries = clusteredVectors(QUERIES, 2);
  const truth = exactNearest(vectors, queries);
  const cores = availableParallelism();
  const variants: Array<[string, VectorSettings, number]> = [
    ['service (M 16, expansion_add 128), 1 thread', VECTOR_SETTINGS, 1],
    [`service (M 16, expansion_add 128), ${cores} threads`, VECTOR_SETTINGS, cores],
    [`M 16, expansion_add 64, ${cores} threads`, { ...VECTOR_SETTINGS, addExpansion: 64 }, cores],
    [`M 16, expansion_add 40, ${cores} threads`, { ...VECTOR_SETTINGS, addExpansion: 40 }, cores],
    [`M 12, expansion_add 64, ${cores} threads`, { ...VECTOR_SETTINGS, connectivity: 12, addExpansion: 64 }, cores],
  ];
  console.log(`\n${SIZE.toLocaleString('en')} vectors; quantising them to int8: ${quantisingSeconds(vectors).toFixed(1)} s on one thread`);
  console.log(`usearch's search: expansion ${VECTOR_SETTINGS.searchExpansion}, best ${REFINE_FACTOR * K} reranked\n`);
  let lanceSeconds: number | undefined;
  const rows: string[] = [];
  if (process.env.VECTOR_BUILD_LANCEDB !== '0') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-vector-build-'));
    try {
      const lance = await buildLanceDb(vectors, DIMENSIONS, dir);
      lanceSeconds = lance.seconds;
      const recalls: number[] = [];
      for (const ef of [128, 256]) recalls.push(await recall((query) => lanceNearest(lance.table, query, K, ef), queries, truth));
      rows.push(
        `| LanceDB IVF_HNSW_SQ (M 16, ef_construction 128), written and indexed | ${lance.seconds.toFixed(1)} | 1 | ${recalls.map((r) => r.toFixed(3)).join(' (ef 128), ')} (ef 256) |`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`| build | seconds | / LanceDB | recall@10 (p50) at search expansion ${SEARCH_EXPANSIONS.join(' / ')} |`);
  console.log('|---|---:|---:|---:|');
  for (const row of rows) console.log(row);
  const chosen = process.env.VECTOR_BUILD_VARIANTS?.split(',').map(Number);
  for (const [name, settings, threads] of variants.filter((_, position) => !chosen || chosen.includes(position))) {
    const { index, seconds } = build(vectors, settings, threads);
    const ratio = lanceSeconds ? (seconds / lanceSeconds).toFixed(2) : '-';
    const searches = [];
    for (const expansion of SEARCH_EXPANSIONS) searches.push(await searchedAt(index, settings, expansion, vectors, queries, truth));
    console.log(
      `| ${name} | ${seconds.toFixed(1)} | ${ratio} | ${searches.map((found) => `${found.recall.toFixed(3)} (${found.p50Ms.toFixed(2)} ms)`).join(' / ')} |`,
    );
  }
}

await main();
