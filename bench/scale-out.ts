// bench:scale-out — billable throughput (GET /document) of the PostgreSQL store with 1, 2 and 4
// instances (serve --workers N), against the embedded default measured in the same run. Target:
// one PostgreSQL-backed instance at >= 60% of the embedded default. Needs a PostgreSQL server:
// BENCH_DATABASE_URL (default TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test); a
// scratch database is created on it and dropped at the end.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { CLI, cpuMeter, HAS_WRK, machineLine, measure, median, PINNED, processesOf, processTree, ROOT, type Sample, start, stop } from './lib.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARM_UP_S = 3;
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const SPREAD_KEYS = 64;

const cli =
  (env: Record<string, string>) =>
  (...args: string[]) =>
    execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });

/** Loads the demo corpus and creates keys, each with an account of its own: the first is the one hot key, all of them the spread. */
function prepare(env: Record<string, string>): string[] {
  const run = cli(env);
  run('ingest', join(ROOT, 'demo/corpus.jsonl'));
  return Array.from({ length: SPREAD_KEYS }, () => (JSON.parse(run('keys', 'create', '--credits', '1000000000', '--json')) as { key: string }).key);
}

/** One account and SPREAD_KEYS keys of it: every debit lands on the one account row. */
function prepareSharedAccount(env: Record<string, string>): string[] {
  const run = cli(env);
  const account = JSON.parse(run('accounts', 'create', '--name', 'shared', '--credits', '1000000000', '--json')) as { id: string };
  return Array.from({ length: SPREAD_KEYS }, () => (JSON.parse(run('keys', 'create', '--account', account.id, '--json')) as { key: string }).key);
}

interface Setup {
  name: string;
  env: Record<string, string>;
  workers: number;
  keys: string[];
  core: string | null;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-scale-'));
  const database = `metered_search_bench_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  try {
    const embedded = { DATA_DIR: join(work, 'data'), SEED_DEMO: 'false' };
    const postgres = { DATABASE_URL: url.toString() };
    const embeddedKeys = prepare(embedded);
    const postgresKeys = prepare(postgres);
    // BENCH_SETUPS=accounts: the baseline, 64 keys of 64 accounts and 64 keys of one account, one instance each.
    const accounts = process.env.BENCH_SETUPS === 'accounts';
    const sharedKeys = accounts ? prepareSharedAccount(postgres) : [];
    const hot = (keys: string[]) => keys.slice(0, 1);
    const allSetups: Setup[] = [
      { name: 'embedded SQLite, 1 instance, one key (baseline)', env: embedded, workers: 1, keys: hot(embeddedKeys), core: '0' },
      { name: 'PostgreSQL, 1 instance, one key', env: postgres, workers: 1, keys: hot(postgresKeys), core: '0' },
      { name: 'PostgreSQL, 2 instances, one key', env: postgres, workers: 2, keys: hot(postgresKeys), core: null },
      { name: 'PostgreSQL, 4 instances, one key', env: postgres, workers: 4, keys: hot(postgresKeys), core: null },
      { name: `PostgreSQL, 1 instance, ${SPREAD_KEYS} keys`, env: postgres, workers: 1, keys: postgresKeys, core: '0' },
      { name: `PostgreSQL, 2 instances, ${SPREAD_KEYS} keys`, env: postgres, workers: 2, keys: postgresKeys, core: null },
      { name: `PostgreSQL, 4 instances, ${SPREAD_KEYS} keys`, env: postgres, workers: 4, keys: postgresKeys, core: null },
    ];
    const shared: Setup = {
      name: `PostgreSQL, 1 instance, ${SPREAD_KEYS} keys of one account`,
      env: postgres,
      workers: 1,
      keys: sharedKeys,
      core: '0',
    };
    // BENCH_SETUPS=2 measures the baseline and the single PostgreSQL instance only (the target's pair).
    const setups = accounts
      ? [allSetups[0] as Setup, allSetups[4] as Setup, shared]
      : allSetups.slice(0, Number(process.env.BENCH_SETUPS ?? allSetups.length));
    const samples = new Map<string, Sample[]>(setups.map((setup) => [setup.name, []]));
    // CPU seconds per request, by whom: the service's processes, PostgreSQL's, the load generator.
    const cpu = new Map<string, Array<{ service: number; postgres: number; load: number }>>(setups.map((setup) => [setup.name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const setup of setups) {
        const server = await start(
          [CLI, 'serve', '--workers', String(setup.workers)],
          { ...setup.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_S: '0', FACE_WORKERS: '0' },
          setup.core,
        );
        const target = {
          name: setup.name,
          url: `${server.url}/document`,
          headers: { 'x-api-key': setup.keys[0], 'svc-doc-id': 'eu-gdpr-art17' },
          ...(setup.keys.length > 1 ? { apiKeys: setup.keys } : {}),
        };
        const load = { connections: CONNECTIONS, scriptDir: work, core: setup.core === null ? undefined : '1' };
        // Each fresh process is warmed up before it is measured: the JIT, the connection pool
        // (PostgreSQL starts a backend per connection) and SQLite's first WAL growth all happen in
        // the first seconds, and are not what a long-running instance costs.
        await measure(target, { ...load, seconds: WARM_UP_S });
        const cpuUsed = cpuMeter({
          service: () => processTree(server.child.pid!),
          postgres: () => processesOf('postgres'),
          load: () => [process.pid],
        });
        const sample = await measure(target, { ...load, seconds: DURATION_S });
        const used = cpuUsed();
        samples.get(setup.name)!.push(sample);
        const requests = sample.requestsPerSecond * DURATION_S;
        cpu.get(setup.name)!.push({ service: used.service! / requests, postgres: used.postgres! / requests, load: used.load! / requests });
        await stop(server.child);
      }
    }
    const baseline = median(samples.get(setups[0].name)!.map((sample) => sample.requestsPerSecond));
    console.log(`\n${machineLine('bench:scale-out')}`);
    console.log(
      `GET /document (billable), ${HAS_WRK ? 'wrk -t1' : 'autocannon'}, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s, each on a fresh process after ${WARM_UP_S} s of warm-up; ` +
        `single instances ${PINNED ? 'on core 0 with the load on core 1' : 'unpinned'}, several instances unpinned; PostgreSQL on the same machine\n`,
    );
    console.log(
      '| setup | req/s (median) | ratio to embedded | p99 ms (median) | errors | CPU µs per request: service | PostgreSQL | load generator | all |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const setup of setups) {
      const runs = samples.get(setup.name)!;
      const rps = median(runs.map((sample) => sample.requestsPerSecond));
      const ratio = (rps / baseline).toFixed(2);
      const note = setup.name === 'PostgreSQL, 1 instance, one key' ? ` (target >= 0.60: ${rps / baseline >= 0.6 ? 'met' : 'MISSED'})` : '';
      const perRequest = cpu.get(setup.name)!;
      const micros = (pick: (used: { service: number; postgres: number; load: number }) => number) => Math.round(median(perRequest.map(pick)) * 1e6);
      const load = HAS_WRK ? '-' : micros((used) => used.load);
      const all = micros((used) => used.service + used.postgres + (HAS_WRK ? 0 : used.load));
      console.log(
        `| ${setup.name} | ${rps} | ${ratio}${note} | ${median(runs.map((sample) => sample.p99Ms))} | ${runs.reduce((sum, sample) => sum + sample.errors, 0)} | ` +
          `${micros((used) => used.service)} | ${micros((used) => used.postgres)} | ${load} | ${all} |`,
      );
    }
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
