// What the benchmarks share: starting servers pinned to a core, loading them with wrk (or
// autocannon when wrk is not installed), and the medians of interleaved rounds.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const CLI = join(ROOT, 'dist/cli/main.js');
export const PINNED = cpus().length > 1 && spawnSync('taskset', ['-V']).status === 0;
export const HAS_WRK = spawnSync('wrk', ['-v']).error === undefined;

export interface Target {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Each request picks one of these at random as its x-api-key. */
  apiKeys?: string[];
}

export interface Sample {
  requestsPerSecond: number;
  p99Ms: number;
  errors: number;
}

export function onCore(core: string | null | undefined, command: string, args: string[]): [string, string[]] {
  return PINNED && typeof core === 'string' ? ['taskset', ['-c', core, command, ...args]] : [command, args];
}

export interface Started {
  url: string;
  child: ChildProcess;
  output: () => string;
}

/**
 * Starts a Node.js server process and waits for its "listening on URL" line. On core 0 unless
 * `core` says otherwise; null leaves it free to run on any core (so do its children, such as
 * `serve --workers N`'s workers, which inherit the parent's cores).
 */
export async function start(args: string[], env: Record<string, string>, core: string | null = '0'): Promise<Started> {
  const [command, rest] = onCore(core, process.execPath, args);
  const child = spawn(command, rest, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /listening on (\S+)/.exec(output);
      if (match) {
        clearInterval(timer);
        resolve(match[1]);
      }
    }, 20);
    child.once('exit', () => reject(new Error(output)));
  });
  return { url, child, output: () => output };
}

export async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function withWrk(target: Target, seconds: number, connections: number, scriptDir: string, core: string | undefined): Sample {
  const script = join(scriptDir, 'request.lua');
  const headers = Object.entries(target.headers ?? {})
    .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
    .join('\n');
  writeFileSync(
    script,
    `wrk.method = ${JSON.stringify(target.method ?? 'GET')}\n${headers}\n` +
      (target.body ? `wrk.body = ${JSON.stringify(target.body)}\n` : '') +
      (target.apiKeys
        ? `local keys = {${target.apiKeys.map((key) => JSON.stringify(key)).join(', ')}}\n` +
          `request = function()\n  wrk.headers["x-api-key"] = keys[math.random(#keys)]\n  return wrk.format()\nend\n`
        : '') +
      `done = function(summary, latency, requests)\n  io.write(string.format("RESULT %f %f %d\\n", summary.requests / (summary.duration / 1e6), latency:percentile(99) / 1000, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))\nend\n`,
  );
  const [command, args] = onCore(core, 'wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', script, target.url]);
  const output = execFileSync(command, args, { encoding: 'utf8' });
  const [, rps, p99, errors] = /RESULT (\S+) (\S+) (\d+)/.exec(output)!;
  return { requestsPerSecond: Math.round(Number(rps)), p99Ms: Number(Number(p99).toFixed(2)), errors: Number(errors) };
}

async function withAutocannon(target: Target, seconds: number, connections: number): Promise<Sample> {
  const { apiKeys } = target;
  const result = await autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    headers: target.headers,
    body: target.body,
    connections,
    duration: seconds,
    ...(apiKeys
      ? {
          requests: [
            {
              setupRequest: (request) => ({
                ...request,
                headers: { ...request.headers, 'x-api-key': apiKeys[Math.floor(Math.random() * apiKeys.length)] },
              }),
            },
          ],
        }
      : {}),
  });
  return { requestsPerSecond: Math.round(result.requests.average), p99Ms: result.latency.p99, errors: result.non2xx + result.errors };
}

/** One load run; the load generator goes on `core` (core 1 by default, the servers being on core 0). */
export function measure(
  target: Target,
  options: { seconds: number; connections: number; scriptDir: string; core?: string | undefined },
): Sample | Promise<Sample> {
  const core = 'core' in options ? options.core : '1';
  return HAS_WRK
    ? withWrk(target, options.seconds, options.connections, options.scriptDir, core)
    : withAutocannon(target, options.seconds, options.connections);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export function machineLine(title: string): string {
  return `${title}  ${new Date().toISOString()}  ${cpus().length} cores (${cpus()[0]?.model})  node ${process.version}`;
}

/**
 * Nanoseconds a dependent load takes through 64 MiB (past any L3 here), chasing one random cycle:
 * the memory latency that searches at a million documents pay per cache miss. Machines of one
 * kind differed 3.5x in what they served, and this says how much of that is memory.
 */
export function memoryLatencyNs(): number {
  const slots = 1 << 24;
  const next = new Uint32Array(slots);
  for (let slot = 0; slot < slots; slot++) next[slot] = slot;
  // Sattolo's shuffle: one cycle through every slot, so the chase never settles in a short loop.
  for (let slot = slots - 1; slot > 0; slot--) {
    const other = Math.floor(Math.random() * slot);
    const swapped = next[slot];
    next[slot] = next[other];
    next[other] = swapped;
  }
  const loads = 2_000_000;
  let at = 0;
  const started = performance.now();
  for (let load = 0; load < loads; load++) at = next[at];
  const ns = ((performance.now() - started) * 1e6) / loads;
  // The chase's result is used, so that no compiler may leave the loads out.
  return at >= 0 ? ns : Number.NaN;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** The CPU seconds (user + system) each process has used so far, by pid; gone processes are left out. */
function cpuSecondsByPid(pids: number[]): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    try {
      // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      seconds.set(pid, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND);
    } catch {
      // The process ended between listing and reading.
    }
  }
  return seconds;
}

/** A process and all its descendants. */
export function processTree(root: number): number[] {
  const tree = [root];
  for (let index = 0; index < tree.length; index++) {
    for (const task of safeList(`/proc/${tree[index]}/task`)) {
      const children = safeRead(`/proc/${tree[index]}/task/${task}/children`).split(' ').filter(Boolean).map(Number);
      tree.push(...children);
    }
  }
  return tree;
}

/** Every process running as `user` (PostgreSQL's server processes, for example). */
export function processesOf(user: string): number[] {
  const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim();
  if (uid === '') return [];
  return safeList('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(safeRead(`/proc/${pid}/status`)))
    .map(Number);
}

function safeList(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * CPU used by groups of processes between `start` and the call of the function it returns, in
 * seconds per group; a process that started in between counts from zero.
 */
export function cpuMeter(groups: Record<string, () => number[]>): () => Record<string, number> {
  const before = new Map(Object.entries(groups).map(([name, pids]) => [name, cpuSecondsByPid(pids())]));
  return () =>
    Object.fromEntries(
      Object.entries(groups).map(([name, pids]) => {
        let used = 0;
        for (const [pid, seconds] of cpuSecondsByPid(pids())) used += seconds - (before.get(name)!.get(pid) ?? 0);
        return [name, used];
      }),
    );
}

/**
 * Each connection starts at its own place in `requests`, evenly spaced. autocannon starts them all
 * at the first, so 50 connections sent the same query at once and the index served it 50 times
 * from warm caches: 3-word searches at 1M measured about 10% more requests/s that way.
 */
export function spreadOver(requests: autocannon.Request[], connections: number): Pick<autocannon.Options, 'requests' | 'setupClient'> {
  let connection = 0;
  const spacing = Math.max(1, Math.floor(requests.length / connections));
  return {
    requests,
    setupClient: (client) => {
      const first = (connection++ * spacing) % requests.length;
      client.setRequests([...requests.slice(first), ...requests.slice(0, first)]);
    },
  };
}

/** A built search corpus of some checkout, whichever layout its dist/ has. */
export interface BuiltCorpus {
  search(request: unknown): Promise<{ total: number; hits: Array<{ docId: string; score: number }> }>;
  prepareSearch(): Promise<void>;
  countDocuments(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Opens `dataDir` with the SQLite store of the checkout at `root` (dist/ built), and its query
 * analyser. Reads both the domain-folder layout and the earlier one (store/sqlite.js), so a
 * comparison can run against a checkout from before the layout changed.
 */
export async function openBuiltCorpus(
  root: string,
  dataDir: string,
  options: { searchThreads?: number } = {},
): Promise<{ corpus: BuiltCorpus; analyze: (text: string) => string[] }> {
  const load = (path: string) => import(pathToFileURL(join(root, 'dist', path)).href);
  const exists = (path: string) => existsSync(join(root, 'dist', path));
  if (exists('store/sqlite-store.js')) {
    const { SqliteStore } = await load('store/sqlite-store.js');
    const { analyze } = await load('search/analyzer.js');
    const store = new SqliteStore(dataDir, options);
    const corpus: BuiltCorpus = {
      search: (request) => store.index.search(request),
      prepareSearch: () => store.index.prepareSearch(),
      countDocuments: () => store.documents.countDocuments(),
      close: () => store.close(),
    };
    return { corpus, analyze };
  }
  const { SqliteStore } = await load('store/sqlite.js');
  const { analyze } = await load('services/search/analyzer.js');
  return { corpus: new SqliteStore(dataDir, options), analyze };
}
