// bench:memory — what the optional malloc_trim addon (npm run build:native) is worth: the service's
// RSS at a million documents (MEMORY_SIZE) of bench:search's synthetic corpus, with the addon and
// without it, the two alternated MEMORY_ROUNDS times (default 2) over one data folder. Per start:
// RSS once listening (the index loaded, trimmed and collected), then after MEMORY_SECONDS (default
// 10) of 3-word searches under 50 connections, the start's seconds and the searches' req/s.
// "Without" runs this build's dist/ from a scratch copy that has no native/build beside it, so the
// addon is not found; nothing else differs. A third variant is the same without the addon and glibc
// told to map every allocation over 128 KiB (MALLOC_MMAP_THRESHOLD_), a remedy with no compiler.
//
//   npm run build && npm run build:native && npm run bench:memory
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { CLI, machineLine, median, processTree, ROOT, spreadOver, start, stop } from './lib.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.MEMORY_SIZE ?? 1_000_000);
const ROUNDS = Number(process.env.MEMORY_ROUNDS ?? 2);
const SECONDS = Number(process.env.MEMORY_SECONDS ?? 10);

interface Run {
  listening: number;
  loaded: number;
  startSeconds: number;
  rps: number;
}

function rssMiB(pids: number[]): number {
  let kib = 0;
  for (const pid of pids) {
    const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    kib += Number(match?.[1] ?? 0);
  }
  return Math.round(kib / 1024);
}

/** This build's dist/ in a scratch folder with the same dependencies and no native addon. */
function copyWithoutAddon(scratch: string): string {
  const root = join(scratch, 'without-addon');
  mkdirSync(root);
  cpSync(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  cpSync(join(ROOT, 'demo'), join(root, 'demo'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return join(root, 'dist/cli/main.js');
}

async function measure(cli: string, env: Record<string, string>, requests: autocannon.Request[]): Promise<Run> {
  const started = performance.now();
  const service = await start([cli, 'serve'], env, null);
  const startSeconds = (performance.now() - started) / 1000;
  try {
    const listening = rssMiB(processTree(service.child.pid as number));
    const load = await autocannon({ url: service.url, connections: 50, duration: SECONDS, ...spreadOver(requests, 50) });
    return { listening, loaded: rssMiB(processTree(service.child.pid as number)), startSeconds, rps: Math.round(load.requests.average) };
  } finally {
    await stop(service.child);
  }
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'native/build/Release/malloc_trim.node'))) {
    console.error('The addon is not built: run npm run build:native first.');
    process.exit(2);
  }
  const scratch = mkdtempSync(join(tmpdir(), 'bench-memory-'));
  try {
    const vocabulary = words();
    const env = {
      DATA_DIR: join(scratch, 'data'),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_S: '0',
      FACE_WORKERS: '0',
      SEED_DEMO: 'false',
    };
    const file = join(scratch, 'corpus.jsonl');
    await writeCorpus(file, SIZE, vocabulary);
    execFileSync(process.execPath, [CLI, 'ingest', file], { env: { ...process.env, ...env } });
    rmSync(file);
    const created = execFileSync(process.execPath, [CLI, 'keys', 'create', '--credits', '1000000000', '--json'], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    const key = (JSON.parse(created) as { key: string }).key;
    const requests = queries(vocabulary, 3).map((query) => ({
      method: 'POST' as const,
      path: '/query',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ query, top_k: 10 }),
    }));
    const withoutAddon = copyWithoutAddon(scratch);
    const builds = [
      { name: 'with the addon', cli: CLI, env, runs: [] as Run[] },
      { name: 'without it', cli: withoutAddon, env, runs: [] as Run[] },
      // glibc's mmap threshold fixed at its default: large arrays are mapped, and given back when freed.
      { name: 'without it, MALLOC_MMAP_THRESHOLD_=131072', cli: withoutAddon, env: { ...env, MALLOC_MMAP_THRESHOLD_: '131072' }, runs: [] as Run[] },
    ];
    console.log(`\n${machineLine('bench:memory')}  ${SIZE} documents, ${ROUNDS} rounds alternated, ${SECONDS} s of 3-word searches each\n`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) build.runs.push(await measure(build.cli, build.env, requests));
    }
    console.log('| build | RSS listening, MiB | RSS after the searches, MiB | start s | 3-word req/s | each run (listening / after) |');
    console.log('|---|---:|---:|---:|---:|---|');
    const middle = (runs: Run[], field: keyof Run) => median(runs.map((run) => run[field]));
    for (const { name, runs } of builds) {
      const each = runs.map((run) => `${run.listening} / ${run.loaded}`).join(', ');
      console.log(
        `| ${name} | ${middle(runs, 'listening')} | ${middle(runs, 'loaded')} | ${middle(runs, 'startSeconds').toFixed(1)} | ${middle(runs, 'rps')} | ${each} |`,
      );
    }
    const baseline = middle(builds[1].runs, 'listening');
    for (const { name, runs } of [builds[0], builds[2]])
      console.log(`listening RSS ${name}: ${(middle(runs, 'listening') / baseline).toFixed(3)} of without it`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
