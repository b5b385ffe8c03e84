// bench:vector-build — where building the vector index goes, and what the graph's settings trade:
// VECTOR_BUILD_SIZE clustered 384-dimension vectors (default 200,000; bench:vectors' kind), added
// to usearch's HNSW (int8) on 1 thread and on every core, at the service's settings and at fewer
// candidates while adding (expansion_add) or fewer links (connectivity); each build's vectors/s, and
// recall@10 of 200 queries at the service's search (expansion 128, best 40 reranked by exact cosine).
// VECTOR_BUILD_VARIANTS (say "2,4") runs only those rows of the table, by position from 0.
//
//   npm run bench:vector-build
import { availableParallelism } from 'node:os';
import { REFINE_FACTOR, VECTOR_SETTINGS, VectorIndex, type VectorSettings } from '../src/search/vector-index.js';
import { machineLine } from './lib.js';
import { clusteredVectors, DIMENSIONS, exactNearest, K } from './vector-data.js';

const SIZE = Number(process.env.VECTOR_BUILD_SIZE ?? 200_000);
const QUERIES = 200;

function build(vectors: Float32Array, settings: VectorSettings, threads: number): { index: VectorIndex; seconds: number } {
  const index = new VectorIndex(DIMENSIONS, settings);
  const rowids = Array.from({ length: SIZE }, (_, row) => row + 1);
  const started = performance.now();
  const step = 20_000;
  for (let start = 0; start < SIZE; start += step) {
    const end = Math.min(SIZE, start + step);
    index.add(rowids.slice(start, end), vectors.subarray(start * DIMENSIONS, end * DIMENSIONS), threads);
  }
  return { index, seconds: (performance.now() - started) / 1000 };
}

function recall(index: VectorIndex, vectors: Float32Array, queries: Float32Array, truth: number[][]): number {
  const exact = (rowids: readonly number[]) => rowids.map((rowid) => vectors.subarray((rowid - 1) * DIMENSIONS, rowid * DIMENSIONS));
  let found = 0;
  for (let query = 0; query < QUERIES; query++) {
    const nearest = index.nearest(queries.subarray(query * DIMENSIONS, (query + 1) * DIMENSIONS), K, exact, K);
    const wanted = new Set(truth[query]);
    found += nearest.filter((match) => wanted.has(match.rowid - 1)).length;
  }
  return found / (QUERIES * K);
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
  console.log(`\n${SIZE.toLocaleString('en')} vectors; search: expansion ${VECTOR_SETTINGS.searchExpansion}, best ${REFINE_FACTOR * K} reranked\n`);
  console.log('| build | seconds | vectors/s | recall@10 |');
  console.log('|---|---:|---:|---:|');
  const chosen = process.env.VECTOR_BUILD_VARIANTS?.split(',').map(Number);
  for (const [name, settings, threads] of variants.filter((_, position) => !chosen || chosen.includes(position))) {
    const { index, seconds } = build(vectors, settings, threads);
    console.log(`| ${name} | ${seconds.toFixed(1)} | ${(SIZE / seconds).toFixed(0)} | ${recall(index, vectors, queries, truth).toFixed(3)} |`);
  }
}

await main();
