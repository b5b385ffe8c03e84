// bench:restart — how soon a restarted service is ready at a million documents (RESTART_SIZE) of
// bench:search's corpus: spawned `serve` to /readyz 200, with FACE_WORKERS=0, for three starts
// alternated RESTART_ROUNDS times (default 3) on this build's dist/:
//   - empty: an empty data folder (process start-up and an empty index: the floor);
//   - from segments: the corpus with the index the service wrote to its data folder (index/);
//   - rebuilt: the same corpus with index/ set aside, so the index is built from the stored term
//     vectors, as a first start on a corpus ingested by the CLI does;
//   - after a stop at ready: the start after one that built the index (index/ set aside) and was
//     stopped with SIGTERM as soon as it was ready, before its write was due: it reads the index that
//     stop wrote. How long that stop took is printed too.
// Printed: the median seconds to ready of each, each run's, how much later than the empty start
// the start from segments is ready (target: at most 1 s), RSS once ready and 10 s later, the first
// 50 3-word searches after ready (one at a time, while the threads compute their common terms'
// bounds), and how long after ready the rebuilt start had written its index to disk.
// RESTART_DATA_DIR reuses a data folder that holds the corpus (else one is built in a scratch
// folder: about two minutes).
//
//   npm run build && npm run bench:restart
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, machineLine, median } from './lib.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.RESTART_SIZE ?? 1_000_000);
const ROUNDS = Number(process.env.RESTART_ROUNDS ?? 3);
/** Searches sent one at a time as soon as a start is ready. */
const FIRST_SEARCHES = 50;

interface Start {
  readySeconds: number;
  readyRssMiB: number;
  laterRssMiB: number;
  /** Seconds from ready until `watch` (a new manifest) appeared, if asked and it did. */
  writtenSeconds?: number;
  /** Milliseconds each of the first searches took, one at a time from ready, when searches were given. */
  firstSearchesMs: number[];
}

/** 3-word searches with a key of the corpus's data folder. */
interface Searches {
  key: string;
  bodies: string[];
}

/** The first searches after ready, one at a time: what a caller waits for while the index settles. */
async function searchOneByOne(url: string, searches: Searches): Promise<number[]> {
  const ms: number[] = [];
  for (const body of searches.bodies) {
    const started = performance.now();
    const response = await fetch(`${url}/query`, {
      method: 'POST',
      headers: { 'x-api-key': searches.key, 'content-type': 'application/json' },
      body,
    });
    if (response.status !== 200) throw new Error(`a search answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
    ms.push(performance.now() - started);
  }
  return ms;
}

function rssMiB(pid: number): number {
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
}

/**
 * Starts `serve` on `dataDir`, times it to /readyz 200, reads its RSS then and `laterMs` after, and
 * stops it; meanwhile, watches for `watch` to appear.
 */
async function timedStart(dataDir: string, laterMs: number, watch?: string, searches?: Searches): Promise<Start> {
  const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', FACE_WORKERS: '0', SEED_DEMO: 'false', RATE_LIMIT_PER_S: '0' };
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    let url: string | undefined;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the service stopped:\n${output}`);
      url ??= /listening on (\S+)/.exec(output)?.[1];
      const ready = url && (await fetch(`${url}/readyz`).catch(() => undefined));
      if (ready && ready.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const ready = performance.now();
    const readyRssMiB = rssMiB(child.pid as number);
    const firstSearchesMs = searches && url ? await searchOneByOne(url, searches) : [];
    let writtenSeconds: number | undefined;
    while (performance.now() - ready < laterMs) {
      if (watch && writtenSeconds === undefined && existsSync(watch)) writtenSeconds = (performance.now() - ready) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { readySeconds: (ready - started) / 1000, readyRssMiB, laterRssMiB: rssMiB(child.pid as number), writtenSeconds, firstSearchesMs };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function corpusFolder(scratch: string): Promise<string> {
  if (process.env.RESTART_DATA_DIR) return process.env.RESTART_DATA_DIR;
  const dataDir = join(scratch, 'data');
  const file = join(scratch, 'corpus.jsonl');
  await writeCorpus(file, SIZE, words());
  execFileSync(process.execPath, [CLI, 'ingest', file], { env: { ...process.env, DATA_DIR: dataDir, SEED_DEMO: 'false' } });
  rmSync(file);
  return dataDir;
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'bench-restart-'));
  try {
    const dataDir = await corpusFolder(scratch);
    const segments = join(dataDir, 'index');
    const setAside = join(scratch, 'index-set-aside');
    // The index written to disk: a start builds it, and writes it once it has been unchanged a while.
    if (!existsSync(join(segments, 'manifest.json'))) {
      console.log('writing the index to disk: one start that builds it and waits for the write');
      await timedStart(dataDir, 30_000);
    }
    if (!existsSync(join(segments, 'manifest.json'))) throw new Error(`no index was written to ${segments}`);
    const manifest = join(segments, 'manifest.json');
    const created = execFileSync(process.execPath, [CLI, 'keys', 'create', '--credits', '1000000000', '--json'], {
      env: { ...process.env, DATA_DIR: dataDir, SEED_DEMO: 'false' },
      encoding: 'utf8',
    });
    const searches: Searches = {
      key: (JSON.parse(created) as { key: string }).key,
      bodies: queries(words(), 3)
        .slice(0, FIRST_SEARCHES)
        .map((query) => JSON.stringify({ query, top_k: 10 })),
    };
    const stops: number[] = [];
    const starts: Record<
      string,
      { dir: () => string; watch?: string; searches?: Searches; before?: () => void | Promise<void>; after?: () => void; runs: Start[] }
    > = {
      empty: { dir: () => mkdirSyncFresh(join(scratch, 'empty')), runs: [] },
      'from segments': { dir: () => dataDir, searches, runs: [] },
      rebuilt: {
        dir: () => dataDir,
        watch: manifest,
        searches,
        before: () => renameSync(segments, setAside),
        after: () => restoreSegments(segments, setAside),
        runs: [],
      },
      'after a stop at ready': {
        dir: () => dataDir,
        searches,
        before: async () => {
          renameSync(segments, setAside);
          const began = performance.now();
          const stopped = await timedStart(dataDir, 0);
          stops.push((performance.now() - began) / 1000 - stopped.readySeconds);
        },
        after: () => restoreSegments(segments, setAside),
        runs: [],
      },
    };
    console.log(`\n${machineLine('bench:restart')}  ${SIZE} documents, ${ROUNDS} rounds alternated, FACE_WORKERS=0\n`);
    for (let round = 0; round < ROUNDS; round++) {
      const names = Object.keys(starts);
      for (const name of round % 2 === 0 ? names : names.reverse()) {
        const start = starts[name];
        await start.before?.();
        try {
          start.runs.push(await timedStart(start.dir(), 10_000, start.watch, start.searches));
        } finally {
          start.after?.();
        }
      }
    }
    console.log('| start | ready, s (median) | each run, s | RSS when ready, MiB | RSS 10 s later, MiB |');
    console.log('|---|---:|---|---:|---:|');
    for (const [name, { runs }] of Object.entries(starts)) {
      const each = runs.map((run) => run.readySeconds.toFixed(2)).join(', ');
      const ready = median(runs.map((run) => run.readySeconds)).toFixed(2);
      console.log(`| ${name} | ${ready} | ${each} | ${median(runs.map((run) => run.readyRssMiB))} | ${median(runs.map((run) => run.laterRssMiB))} |`);
    }
    const ready = (name: string) => median(starts[name].runs.map((run) => run.readySeconds));
    console.log(`\nfrom segments, later than the empty start: ${(ready('from segments') - ready('empty')).toFixed(2)} s (target: at most 1 s)`);
    console.log(`rebuilt, later than the empty start: ${(ready('rebuilt') - ready('empty')).toFixed(2)} s`);
    console.log(
      `after a stop at ready, later than the empty start: ${(ready('after a stop at ready') - ready('empty')).toFixed(2)} s; ` +
        `that stop (SIGTERM to exit, the index written) took ${stops.map((seconds) => seconds.toFixed(2)).join(', ')} s`,
    );
    console.log(`from segments / rebuilt: ${(ready('from segments') / ready('rebuilt')).toFixed(3)}`);
    for (const name of ['from segments', 'rebuilt']) {
      const all = starts[name].runs.flatMap((run) => run.firstSearchesMs);
      const firsts = starts[name].runs.map((run) => run.firstSearchesMs[0].toFixed(0)).join(', ');
      console.log(
        `${name}: the first ${FIRST_SEARCHES} 3-word searches after ready, one at a time: median ${median(all).toFixed(1)} ms, slowest ${Math.max(...all).toFixed(0)} ms, the very first ${firsts} ms`,
      );
    }
    const written = starts.rebuilt.runs.map((run) => (run.writtenSeconds === undefined ? 'not within 10 s' : `${run.writtenSeconds.toFixed(1)} s`));
    console.log(`rebuilt, its index on disk after ready (5 s unchanged, then the write): ${written.join(', ')}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function mkdirSyncFresh(path: string): string {
  rmSync(path, { recursive: true, force: true });
  mkdirSync(path);
  return path;
}

/** Puts the set-aside index back, over whatever the rebuilt start may have written meanwhile. */
function restoreSegments(segments: string, setAside: string): void {
  rmSync(segments, { recursive: true, force: true });
  renameSync(setAside, segments);
}

await main();
