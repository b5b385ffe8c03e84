// bench:restart-semantic — how soon a service with an embedding model is ready, beside one without,
// on RESTART_SIZE documents (default 100,000) of bench:search's corpus, each with a 384-dimension
// vector (bench/instant-embedder.ts, ingested in process as a CLI ingest would, its indexes then
// written as `metered-search ingest` writes them, timed): first the start after that ingest, then
// spawned `serve` on this build's dist/ to /readyz 200, FACE_WORKERS=0, alternated RESTART_ROUNDS
// times (default 2):
//   - lexical: no EMBEDDINGS_URL; the text index read back from index/;
//   - semantic, from disk: EMBEDDINGS_* set (the stand-in on loopback); index/ and vectors/ read back;
//   - semantic, no vector index on disk: vectors/ set aside (an ingest of an older build, or one
//     whose index was lost): the vector index is built on a worker while the service answers
//     lexical searches sent one at a time; and the same start idle, sent only a semantic query
//     each second.
// Printed: seconds to ready of each; for the first starts, seconds until a semantic query is
// answered (200, not 503), and the lexical searches' p50 and p99 beside those after a start from disk;
// then, after one more start from disk, lexical, semantic and hybrid searches over HTTP, alternated
// prompt by prompt, their p50 and p99 and the ratios to lexical's p50.
//
//   npm run build && npm run bench:restart-semantic
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { INDEX_UPKEEP } from '../src/corpus/index-keeper.js';
import { SqliteCorpus } from '../src/corpus/sqlite-corpus.js';
import { readDocuments } from '../src/documents/ingest.js';
import { DocumentEmbeddings } from '../src/embeddings/document-embeddings.js';
import { startStandInEmbedder } from '../src/embeddings/stand-in/stand-in-embedder.js';
import { INSTANT_DIMENSIONS, InstantEmbedder } from './instant-embedder.js';
import { CLI, machineLine, median, start, stop } from './lib.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.RESTART_SIZE ?? 100_000);
const ROUNDS = Number(process.env.RESTART_ROUNDS ?? 2);
/** Lexical searches sent one at a time after a start from disk. */
const SEARCHES = 200;
const SEMANTIC_BODY = JSON.stringify({ query: 'car automobile', mode: 'semantic', top_k: 10 });

interface Run {
  readySeconds: number;
  /** First start: seconds from the spawn until a semantic query was answered. */
  semanticSeconds?: number;
  lexicalMs: number[];
}

async function post(url: string, key: string, body: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${url}/query`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

/**
 * Starts `serve` with `env`, times it to /readyz 200, then sends lexical searches one at a time:
 * SEARCHES of them, or (`untilSemantic`) until a semantic query, sent every second, is answered
 * (`bodies` empty: only that query).
 */
async function timedStart(env: Record<string, string>, key: string, bodies: string[], untilSemantic: boolean): Promise<Run> {
  const spawned = performance.now();
  const server = await start([CLI, 'serve'], env, null);
  try {
    while ((await fetch(`${server.url}/readyz`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 10));
    const readySeconds = (performance.now() - spawned) / 1000;
    const lexicalMs: number[] = [];
    let lastSemantic = 0;
    for (let sent = 0; untilSemantic || sent < SEARCHES; sent++) {
      if (bodies.length > 0) {
        const lexical = await post(server.url, key, bodies[sent % bodies.length]);
        if (lexical.status !== 200) throw new Error(`a lexical search answered ${lexical.status}`);
        lexicalMs.push(lexical.ms);
      } else await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (performance.now() - lastSemantic))));
      if (untilSemantic && performance.now() - lastSemantic >= 1000) {
        lastSemantic = performance.now();
        const semantic = await post(server.url, key, SEMANTIC_BODY);
        if (semantic.status === 200) return { readySeconds, semanticSeconds: (performance.now() - spawned) / 1000, lexicalMs };
        if (semantic.status !== 503) throw new Error(`a semantic search answered ${semantic.status}`);
      }
    }
    if (env.EMBEDDINGS_URL && (await post(server.url, key, SEMANTIC_BODY)).status !== 200) throw new Error('a semantic search failed');
    return { readySeconds, lexicalMs };
  } finally {
    await stop(server.child);
  }
}

const MODES = ['lexical', 'semantic', 'hybrid'] as const;

/**
 * A start from disk, then each prompt in every mode in turn over HTTP, one request at a time,
 * twice: the second pass is timed, every prompt's vector then in the service's cache.
 */
async function modesOverHttp(env: Record<string, string>, key: string, prompts: string[]): Promise<Record<(typeof MODES)[number], number[]>> {
  const server = await start([CLI, 'serve'], env, null);
  const times: Record<(typeof MODES)[number], number[]> = { lexical: [], semantic: [], hybrid: [] };
  try {
    while ((await fetch(`${server.url}/readyz`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 10));
    for (let pass = 0; pass < 2; pass++) {
      for (const query of prompts) {
        for (const mode of MODES) {
          const answered = await post(server.url, key, JSON.stringify({ query, top_k: 10, ...(mode === 'lexical' ? {} : { mode }) }));
          if (answered.status !== 200) throw new Error(`a ${mode} search answered ${answered.status}`);
          if (pass === 1) times[mode].push(answered.ms);
        }
      }
    }
    return times;
  } finally {
    await stop(server.child);
  }
}

function percentiles(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  return `p50 ${median(sorted).toFixed(2)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)].toFixed(2)} ms (${sorted.length} searches)`;
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-restart-semantic-'));
  const standIn = await startStandInEmbedder({ dimensions: INSTANT_DIMENSIONS });
  try {
    const dataDir = join(scratch, 'data');
    mkdirSync(dataDir);
    const path = join(scratch, 'corpus.jsonl');
    const vocabulary = words();
    await writeCorpus(path, SIZE, vocabulary);
    // Split over as many search threads as `serve` (and the CLI) use here, so that the start reads the text index written.
    const upkeep = { ...INDEX_UPKEEP, searchThreads: Math.min(4, availableParallelism()) };
    const corpus = new SqliteCorpus(dataDir, upkeep, undefined, new DocumentEmbeddings(new InstantEmbedder(), 2000));
    await corpus.ingestDocuments(await readDocuments(path));
    const writing = performance.now();
    await corpus.writeIndexes();
    await corpus.close();
    const writeSeconds = (performance.now() - writing) / 1000;
    rmSync(path);
    const base = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', FACE_WORKERS: '0', SEED_DEMO: 'false', RATE_LIMIT_PER_S: '0' };
    const semanticEnv = { ...base, EMBEDDINGS_URL: standIn.url, EMBEDDINGS_MODEL: 'stand-in', EMBEDDINGS_DIMENSIONS: String(INSTANT_DIMENSIONS) };
    const created = execFileSync(process.execPath, [CLI, 'keys', 'create', '--credits', '1000000000', '--json'], {
      env: { ...process.env, ...base },
      encoding: 'utf8',
    });
    const key = (JSON.parse(created) as { key: string }).key;
    const bodies = queries(vocabulary, 3).map((query) => JSON.stringify({ query, top_k: 10 }));

    console.log(
      `\n${machineLine('bench:restart-semantic')}  ${SIZE} documents, ${INSTANT_DIMENSIONS}-dimension vectors, ${ROUNDS} rounds alternated\n`,
    );
    for (const written of [join(dataDir, 'index', 'manifest.json'), join(dataDir, 'vectors', 'vectors.json')]) {
      if (!existsSync(written)) throw new Error(`the ingest wrote no ${written}`);
    }
    const first = await timedStart(semanticEnv, key, bodies, true);
    console.log(
      `the ingest wrote both indexes in ${writeSeconds.toFixed(1)} s (on ${availableParallelism()} cores); the first start after it: ` +
        `ready ${first.readySeconds.toFixed(2)} s, semantic answered ${first.semanticSeconds?.toFixed(2)} s after the spawn`,
    );
    const vectors = join(dataDir, 'vectors');
    const setAside = join(scratch, 'vectors-set-aside');
    const firstStart = async (lexical: string[]) => {
      renameSync(vectors, setAside);
      try {
        return await timedStart(semanticEnv, key, lexical, true);
      } finally {
        rmSync(vectors, { recursive: true, force: true });
        renameSync(setAside, vectors);
      }
    };
    const starts: Record<string, { run: () => Promise<Run>; runs: Run[] }> = {
      lexical: { run: () => timedStart(base, key, bodies, false), runs: [] },
      'semantic, from disk': { run: () => timedStart(semanticEnv, key, bodies, false), runs: [] },
      'semantic, no vector index on disk': { run: () => firstStart(bodies), runs: [] },
      'semantic, no vector index on disk, idle': { run: () => firstStart([]), runs: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      const names = Object.keys(starts);
      for (const name of round % 2 === 0 ? names : names.reverse()) starts[name].runs.push(await starts[name].run());
    }
    console.log('| start | ready, s (median) | each run, s | semantic answered, s after the spawn | lexical searches one at a time after ready |');
    console.log('|---|---:|---|---:|---|');
    for (const [name, { runs }] of Object.entries(starts)) {
      const semantic = runs.every((run) => run.semanticSeconds !== undefined)
        ? median(runs.map((run) => run.semanticSeconds as number)).toFixed(1)
        : '';
      const each = runs.map((run) => run.readySeconds.toFixed(2)).join(', ');
      const lexical = runs.flatMap((run) => run.lexicalMs);
      const searches = lexical.length > 0 ? percentiles(lexical) : '';
      console.log(`| ${name} | ${median(runs.map((run) => run.readySeconds)).toFixed(2)} | ${each} | ${semantic} | ${searches} |`);
    }
    const ready = (name: string) => median(starts[name].runs.map((run) => run.readySeconds));
    console.log(`\nsemantic from disk / lexical, ready: ${(ready('semantic, from disk') / ready('lexical')).toFixed(2)}`);
    console.log(`semantic first start after the ingest / lexical, ready: ${(first.readySeconds / ready('lexical')).toFixed(2)}`);
    console.log(
      `semantic with no vector index on disk / lexical, ready: ${(ready('semantic, no vector index on disk') / ready('lexical')).toFixed(2)}`,
    );
    const overHttp = await modesOverHttp(semanticEnv, key, queries(vocabulary, 3));
    console.log('\nover HTTP after a start from disk, one request at a time, each prompt in every mode in turn (prompts cached):');
    for (const mode of MODES) {
      const ratio = median(overHttp[mode]) / median(overHttp.lexical);
      console.log(`  ${mode.padEnd(9)} ${percentiles(overHttp[mode])}${mode === 'lexical' ? '' : `: ${ratio.toFixed(2)}x lexical at p50`}`);
    }
  } finally {
    await standIn.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
