// bench:semantic — what semantic search adds in process, on bench:search's synthetic corpus
// (SEMANTIC_SIZE documents, default 100,000) with an embedder that answers at once (384 seeded
// random numbers per text): what the embedding path costs beside the model's own time.
//   - ingest documents/s, lexical only and with vectors, alternated SEMANTIC_ROUNDS times (default 2);
//   - per query p50 and p99 of lexical, semantic and hybrid searches of the same 200 3-word queries,
//     the prompts' vectors computed beforehand (as the LRU cache holds a repeated prompt's), on as
//     many search threads as `serve` uses here (SEMANTIC_SEARCH_THREADS; the ingests use one);
//   - beside them, LanceDB's hybrid search over the same documents and vectors (its FTS and its
//     IVF_HNSW_SQ index, fused by its RRF reranker; SEMANTIC_LANCEDB=0 leaves it out).
//
//   npm run bench:semantic
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { searchThreadsOf } from '../src/config.js';
import { INDEX_UPKEEP } from '../src/corpus/index-keeper.js';
import { SqliteCorpus } from '../src/corpus/sqlite-corpus.js';
import { readDocuments } from '../src/documents/ingest.js';
import { DocumentEmbeddings } from '../src/embeddings/document-embeddings.js';
import { textToEmbed } from '../src/embeddings/embedder.js';
import { analyze } from '../src/search/analyzer.js';
import { SEMANTIC_DEPTH } from '../src/search/document-index.js';
import { VectorIndex } from '../src/search/vector-index.js';
import { INSTANT_DIMENSIONS as DIMENSIONS, InstantEmbedder } from './instant-embedder.js';
import { machineLine, median } from './lib.js';
import { buildLanceText, type LanceText, lanceHybrid } from './peers/lancedb-text.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.SEMANTIC_SIZE ?? 100_000);
const ROUNDS = Number(process.env.SEMANTIC_ROUNDS ?? 2);
const WITH_LANCEDB = process.env.SEMANTIC_LANCEDB !== '0';
/** Searches run on as many search threads as `serve` uses here, unless SEMANTIC_SEARCH_THREADS says. */
const SEARCH_THREADS = Number(process.env.SEMANTIC_SEARCH_THREADS ?? searchThreadsOf({ searchThreads: undefined, workers: 1 }));
const MAX_CHARS = 2000;

function openCorpus(dir: string, embeddings: DocumentEmbeddings | undefined, searchThreads: number): SqliteCorpus {
  // The vector index is built before the searches are timed, as a start with few vectors does.
  const upkeep = { ...INDEX_UPKEEP, searchThreads, vectorBuildInPlaceRows: Number.POSITIVE_INFINITY };
  return new SqliteCorpus(dir, upkeep, undefined, embeddings);
}

async function ingest(path: string, embeddings: DocumentEmbeddings | undefined): Promise<{ seconds: number; dir: string; corpus: SqliteCorpus }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-semantic-'));
  const corpus = openCorpus(dir, embeddings, 1);
  const started = performance.now();
  await corpus.ingestDocuments(await readDocuments(path));
  return { seconds: (performance.now() - started) / 1000, dir, corpus };
}

function percentiles(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  return `p50 ${median(sorted).toFixed(3)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)].toFixed(3)} ms`;
}

/** LanceDB over the same documents, each with the vector the ingest gave it. */
async function lanceBeside(path: string, dir: string, embedder: InstantEmbedder): Promise<LanceText> {
  const built = await buildLanceText(path, dir, { of: (rows) => embedder.embed(rows.map((row) => textToEmbed(row, MAX_CHARS))) });
  console.log(`LanceDB: ${built.documents} documents, FTS and vector indexes built in ${built.seconds.toFixed(1)} s`);
  return built;
}

async function main(): Promise<void> {
  console.log(machineLine('bench:semantic'));
  const scratch = mkdtempSync(join(tmpdir(), 'bench-semantic-corpus-'));
  const path = join(scratch, 'corpus.jsonl');
  const vocabulary = words();
  await writeCorpus(path, SIZE, vocabulary);
  const embedder = new InstantEmbedder();
  const embeddings = new DocumentEmbeddings(embedder, MAX_CHARS);
  const rates: Record<'lexical' | 'with vectors', number[]> = { lexical: [], 'with vectors': [] };
  let kept: { dir: string; corpus: SqliteCorpus } | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ['lexical', 'with vectors'] as const) {
      const built = await ingest(path, kind === 'lexical' ? undefined : embeddings);
      rates[kind].push(SIZE / built.seconds);
      if (kind === 'with vectors' && round === ROUNDS - 1) kept = built;
      else {
        await built.corpus.close();
        rmSync(built.dir, { recursive: true, force: true });
      }
    }
  }
  const [lexicalRate, vectorRate] = [median(rates.lexical), median(rates['with vectors'])];
  console.log(`${SIZE.toLocaleString('en')} documents, ${DIMENSIONS}-dimension vectors from an embedder that answers at once`);
  console.log(
    `ingest: lexical ${lexicalRate.toFixed(0)} docs/s, with vectors ${vectorRate.toFixed(0)} docs/s: ratio ${(vectorRate / lexicalRate).toFixed(2)} (runs ${rates.lexical.map((r) => r.toFixed(0)).join(', ')} / ${rates['with vectors'].map((r) => r.toFixed(0)).join(', ')})`,
  );
  const { dir } = kept as { dir: string; corpus: SqliteCorpus };
  await kept?.corpus.close();
  const corpus = openCorpus(dir, embeddings, SEARCH_THREADS);
  console.log(`searches on ${SEARCH_THREADS} search thread${SEARCH_THREADS === 1 ? '' : 's'}, as serve here`);
  try {
    const prepared = performance.now();
    await corpus.prepareSearch();
    console.log(`text and vector index built from the stored documents in ${((performance.now() - prepared) / 1000).toFixed(1)} s`);
    const lance = WITH_LANCEDB ? await lanceBeside(path, scratch, embedder) : undefined;
    const reranker = lance ? await (await import('@lancedb/lancedb')).rerankers.RRFReranker.create() : undefined;
    const prompts = queries(vocabulary, 3);
    const vectors = await embedder.embed(prompts);
    const modes = ['lexical', 'semantic', 'hybrid', ...(lance ? (['LanceDB hybrid'] as const) : [])] as const;
    const times: Record<(typeof modes)[number], number[]> = { lexical: [], semantic: [], hybrid: [], 'LanceDB hybrid': [] };
    for (let pass = 0; pass < 2; pass++) {
      for (const [position, prompt] of prompts.entries()) {
        for (const mode of modes) {
          const started = performance.now();
          if (mode === 'LanceDB hybrid' && lance && reranker) await lanceHybrid(lance.table, prompt, vectors[position], 10, reranker);
          else
            await corpus.search({
              terms: analyze(prompt),
              field: { kind: 'all' },
              filters: [],
              topK: 10,
              ...(mode === 'lexical' ? {} : { ranking: { mode: mode === 'semantic' ? 'semantic' : 'hybrid', vector: vectors[position] } }),
            });
          if (pass === 1) times[mode].push(performance.now() - started);
        }
      }
    }
    for (const mode of modes) console.log(`  ${mode.padEnd(14)} ${percentiles(times[mode])}`);
    console.log(`hybrid / lexical at p50: ${(median(times.hybrid) / median(times.lexical)).toFixed(2)}x`);
    if (lance) console.log(`hybrid / LanceDB hybrid at p50: ${(median(times.hybrid) / median(times['LanceDB hybrid'])).toFixed(3)}x`);
    // The floor under both: the graph's own search for the SEMANTIC_DEPTH nearest, nothing reranked or read.
    await corpus.writeIndexes();
    const written = JSON.parse(readFileSync(join(dir, 'vectors', 'vectors.json'), 'utf8')) as { file?: { name: string } };
    if (written.file) {
      const graph = VectorIndex.load(join(dir, 'vectors', written.file.name), DIMENSIONS);
      const graphTimes: number[] = [];
      for (let pass = 0; pass < 2; pass++) {
        for (const vector of vectors) {
          const started = performance.now();
          graph.nearest(vector, SEMANTIC_DEPTH);
          if (pass === 1) graphTimes.push(performance.now() - started);
        }
      }
      console.log(
        `  the graph's search alone (${SEMANTIC_DEPTH} nearest) ${percentiles(graphTimes)}: ${(median(graphTimes) / median(times.lexical)).toFixed(2)}x lexical at p50`,
      );
    }
  } finally {
    await corpus.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
