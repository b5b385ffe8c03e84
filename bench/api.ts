// bench:api — throughput and latency of the free and billable paths, as ratios to a bare Fastify
// JSON route measured in the same run. The servers run pinned to core 0 and the load generator
// (wrk when installed, else autocannon) to core 1; paths are measured in interleaved rounds and
// the median of each is reported, so drift of a shared machine hits the baseline and paths alike.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CLI = join(ROOT, 'dist/cli/main.js');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PINNED = cpus().length > 1 && spawnSync('taskset', ['-V']).status === 0;
const HAS_WRK = spawnSync('wrk', ['-v']).error === undefined;

interface Target {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  target?: number;
}

interface Sample {
  requestsPerSecond: number;
  p99Ms: number;
  errors: number;
}

function onCore(core: string, command: string, args: string[]): [string, string[]] {
  return PINNED ? ['taskset', ['-c', core, command, ...args]] : [command, args];
}

async function start(args: string[], env: Record<string, string>): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const [command, rest] = onCore('0', process.execPath, args);
  const child = spawn(command, rest, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /listening on (\S+)/.exec(output);
      if (match) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    }, 20);
    child.once('exit', () => reject(new Error(output)));
  });
  return { url, child, output: () => output };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function withWrk(target: Target, seconds: number, scriptDir: string): Sample {
  const script = join(scriptDir, 'request.lua');
  const headers = Object.entries(target.headers ?? {})
    .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
    .join('\n');
  writeFileSync(
    script,
    `wrk.method = ${JSON.stringify(target.method ?? 'GET')}\n${headers}\n` +
      (target.body ? `wrk.body = ${JSON.stringify(target.body)}\n` : '') +
      `done = function(summary, latency, requests)\n  io.write(string.format("RESULT %f %f %d\\n", summary.requests / (summary.duration / 1e6), latency:percentile(99) / 1000, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))\nend\n`,
  );
  const [command, args] = onCore('1', 'wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', script, target.url]);
  const output = execFileSync(command, args, { encoding: 'utf8' });
  const [, rps, p99, errors] = /RESULT (\S+) (\S+) (\d+)/.exec(output)!;
  return { requestsPerSecond: Math.round(Number(rps)), p99Ms: Number(Number(p99).toFixed(2)), errors: Number(errors) };
}

async function withAutocannon(target: Target, seconds: number): Promise<Sample> {
  const result = await autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    headers: target.headers,
    body: target.body,
    connections: CONNECTIONS,
    duration: seconds,
  });
  return { requestsPerSecond: Math.round(result.requests.average), p99Ms: result.latency.p99, errors: result.non2xx + result.errors };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  if (PINNED && !HAS_WRK) spawnSync('taskset', ['-cp', '1', String(process.pid)]);
  const work = mkdtempSync(join(tmpdir(), 'bench-api-'));
  const measure = (target: Target, seconds = DURATION_S) => (HAS_WRK ? withWrk(target, seconds, work) : withAutocannon(target, seconds));
  try {
    const dataDir = join(work, 'data');
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    const first = await start([CLI, 'serve'], { ...env, SEED_DEMO: 'true' });
    const key = /Demo API key[^:]*: ([0-9a-f]{64})/.exec(first.output())![1]!;
    await stop(first.child);
    // Enough credits that no request of the run meets a 402.
    execFileSync(process.execPath, [CLI, 'keys', 'topup', key, '--credits', '1000000000'], { env: { ...process.env, ...env } });

    const bare = await start([join(ROOT, 'bench/bare-server.mjs')], { PORT: '0' });
    const service = await start([CLI, 'serve'], env);
    const auth = { 'x-api-key': key };
    const targets: Target[] = [
      { name: 'bare Fastify JSON route (baseline)', url: `${bare.url}/bare` },
      { name: 'GET /credits (free, authenticated)', url: `${service.url}/credits`, headers: auth, target: 0.8 },
      { name: 'GET /document (billable)', url: `${service.url}/document`, headers: { ...auth, 'svc-doc-id': 'eu-gdpr-art17' }, target: 0.5 },
      {
        name: 'POST /query, 3 words (billable)',
        url: `${service.url}/query`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'personal data breach', top_k: 10 }),
      },
    ];
    for (const target of targets) await measure(target, 2);
    const samples = new Map<string, Sample[]>(targets.map((target) => [target.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets) samples.get(target.name)!.push(await measure(target));
    }
    await stop(bare.child);
    await stop(service.child);

    const baseline = median(samples.get(targets[0]!.name)!.map((sample) => sample.requestsPerSecond));
    console.log(`\nbench:api  ${new Date().toISOString()}  ${cpus().length} cores (${cpus()[0]?.model})  node ${process.version}`);
    console.log(
      `load: ${HAS_WRK ? 'wrk -t1' : 'autocannon'}, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s; ` +
        `server ${PINNED ? 'on core 0, load on core 1' : 'unpinned'}; LOG_LEVEL=warn\n`,
    );
    console.log('| path | req/s (median) | ratio to bare | target | p99 ms (median) | errors |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const target of targets) {
      const runs = samples.get(target.name)!;
      const rps = median(runs.map((sample) => sample.requestsPerSecond));
      const ratio = (rps / baseline).toFixed(2);
      const verdict = target.target === undefined ? '' : `>= ${target.target} ${rps / baseline >= target.target ? 'met' : 'MISSED'}`;
      const errors = runs.reduce((sum, sample) => sum + sample.errors, 0);
      console.log(`| ${target.name} | ${rps} | ${ratio} | ${verdict} | ${median(runs.map((sample) => sample.p99Ms))} | ${errors} |`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
