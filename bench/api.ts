// bench:api — throughput and latency of the free and billable paths, as ratios to a bare Fastify
// JSON route measured in the same run. The servers run pinned to core 0 and the load generator
// (wrk when installed, else autocannon) to core 1; paths are measured in interleaved rounds and
// the median of each is reported, so drift of a shared machine hits the baseline and paths alike.
// A second service with METRICS=false answers /credits and /document in the same rounds, to show
// what counting for /metrics costs.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, HAS_WRK, measure as load, machineLine, median, PINNED, ROOT, type Sample, start, stop, type Target } from './lib.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** BENCH_METRICS_OFF=0 leaves out the second service (METRICS=false) and its rows. */
const COMPARE_METRICS = process.env.BENCH_METRICS_OFF !== '0';

async function main(): Promise<void> {
  if (PINNED && !HAS_WRK) spawnSync('taskset', ['-cp', '1', String(process.pid)]);
  const work = mkdtempSync(join(tmpdir(), 'bench-api-'));
  const measure = (target: Target & { target?: number }, seconds = DURATION_S) =>
    load(target, { seconds, connections: CONNECTIONS, scriptDir: work });
  try {
    const dataDir = join(work, 'data');
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_S: '0', FACE_WORKERS: '0' };
    const first = await start([CLI, 'serve'], { ...env, SEED_DEMO: 'true' });
    const key = /Demo API key[^:]*: ([0-9a-f]{64})/.exec(first.output())![1];
    await stop(first.child);
    // Enough credits that no request of the run meets a 402.
    execFileSync(process.execPath, [CLI, 'keys', 'topup', key, '--credits', '1000000000'], { env: { ...process.env, ...env } });
    // The second service gets a copy of the data folder: sharing one, each would wake on the other's writes.
    const otherDataDir = join(work, 'data-without-metrics');
    cpSync(dataDir, otherDataDir, { recursive: true });

    const bare = await start([join(ROOT, 'bench/bare-server.mjs')], { PORT: '0' });
    const service = await start([CLI, 'serve'], env);
    const withoutMetrics = COMPARE_METRICS ? await start([CLI, 'serve'], { ...env, DATA_DIR: otherDataDir, METRICS: 'false' }) : undefined;
    const auth = { 'x-api-key': key };
    const targets: Array<Target & { target?: number }> = [
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
    if (withoutMetrics) {
      targets.push(
        { name: 'GET /credits, METRICS=false', url: `${withoutMetrics.url}/credits`, headers: auth },
        { name: 'GET /document, METRICS=false', url: `${withoutMetrics.url}/document`, headers: { ...auth, 'svc-doc-id': 'eu-gdpr-art17' } },
      );
    }
    for (const target of targets) await measure(target, 2);
    const samples = new Map<string, Sample[]>(targets.map((target) => [target.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets) samples.get(target.name)!.push(await measure(target));
    }
    await stop(bare.child);
    await stop(service.child);
    if (withoutMetrics) await stop(withoutMetrics.child);

    const baseline = median(samples.get(targets[0].name)!.map((sample) => sample.requestsPerSecond));
    console.log(`\n${machineLine('bench:api')}`);
    console.log(
      `load: ${HAS_WRK ? 'wrk -t1' : 'autocannon'}, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s; ` +
        `server ${PINNED ? 'on core 0, load on core 1' : 'unpinned'}; LOG_LEVEL=warn, RATE_LIMIT_PER_S=0 (no rate limit: one key at full speed), FACE_WORKERS=0\n`,
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
    const rpsOf = (name: string) => median((samples.get(name) ?? []).map((sample) => sample.requestsPerSecond));
    for (const path of withoutMetrics ? ['/credits', '/document'] : []) {
      const on = rpsOf(targets.find((target) => target.name.startsWith(`GET ${path} (`))?.name ?? '');
      const off = rpsOf(`GET ${path}, METRICS=false`);
      console.log(`${path}: with metrics ${(on / off).toFixed(3)} of the requests/s without them`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
