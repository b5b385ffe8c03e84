// bench:memory — what the optional malloc_trim addon (npm run build:native) is worth: the service's
// RSS at a million documents (MEMORY_SIZE) of bench:search's synthetic corpus, with the addon and
// without it, the two alternated MEMORY_ROUNDS times (default 2) over one data folder. Per start:
// RSS once listening (the index loaded, trimmed and collected), then after MEMORY_SECONDS (default
// 10) of 3-word searches under 50 connections. "Without" runs this build's dist/ from a scratch
// copy that has no native/build beside it, so the addon is not found; nothing else differs.
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

async function measure(cli: string, env: Record<string, string>, requests: autocannon.Request[]): Promise<{ listening: number; loaded: number }> {
  const service = await start([cli, 'serve'], env, null);
  try {
    const listening = rssMiB(processTree(service.child.pid as number));
    await autocannon({ url: service.url, connections: 50, duration: SECONDS, ...spreadOver(requests, 50) });
    return { listening, loaded: rssMiB(processTree(service.child.pid as number)) };
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
    const builds = [
      { name: 'with the addon', cli: CLI, runs: [] as Array<{ listening: number; loaded: number }> },
      { name: 'without it', cli: copyWithoutAddon(scratch), runs: [] as Array<{ listening: number; loaded: number }> },
    ];
    console.log(`\n${machineLine('bench:memory')}  ${SIZE} documents, ${ROUNDS} rounds alternated, ${SECONDS} s of 3-word searches each\n`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) build.runs.push(await measure(build.cli, env, requests));
    }
    console.log('| build | RSS listening, MiB (median) | RSS after the searches, MiB (median) | each run (listening / after) |');
    console.log('|---|---:|---:|---|');
    for (const build of builds) {
      const runs = build.runs.map((run) => `${run.listening} / ${run.loaded}`).join(', ');
      console.log(`| ${build.name} | ${median(build.runs.map((run) => run.listening))} | ${median(build.runs.map((run) => run.loaded))} | ${runs} |`);
    }
    const [withAddon, without] = builds.map((build) => median(build.runs.map((run) => run.listening)));
    console.log(`\nlistening RSS with the addon: ${(withAddon / without).toFixed(3)} of the RSS without it`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
