// bench:key-timing — does the time to answer reveal anything about a key? Sends interleaved
// sequential requests with: the real key, unknown keys that differ from it in the last or the
// first hex digit, random unknown keys, and a revoked key; prints the latency distribution of
// each. Keys are looked up by their SHA-256, so an unknown key that shares 63 digits with a real
// one must take the same time as a random one: no prefix comparison ever happens.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { CLI, machineLine, start, stop } from './lib.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 4000);

function flipDigit(key: string, index: number): string {
  const digit = key[index] === '0' ? '1' : '0';
  return key.slice(0, index) + digit + key.slice(index + 1);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bench-key-timing-'));
  const env = { DATA_DIR: join(work, 'data'), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_S: '0', FACE_WORKERS: '0' };
  const cli = (...args: string[]) =>
    JSON.parse(execFileSync(process.execPath, [CLI, ...args, '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' }));
  try {
    const real = cli('keys', 'create', '--credits', '1000000000').key as string;
    const revoked = cli('keys', 'create', '--credits', '10').key as string;
    cli('keys', 'revoke', revoked);
    const service = await start([CLI, 'serve'], env);
    const pool = new Pool(service.url, { connections: 1 });
    const kinds: Record<string, () => string> = {
      'real key': () => real,
      'unknown, last digit differs': () => flipDigit(real, 63),
      'unknown, first digit differs': () => flipDigit(real, 0),
      'unknown, random': () => randomBytes(32).toString('hex'),
      'revoked key': () => revoked,
    };
    const routes = [
      { name: 'GET /credits', path: '/credits', headers: {} },
      { name: 'GET /document', path: '/document', headers: { 'svc-doc-id': 'missing-doc' } },
    ];
    console.log(`\n${machineLine('bench:key-timing')}`);
    console.log(`${SAMPLES} sequential requests per kind and route, kinds interleaved in random order, one keep-alive connection\n`);
    console.log('| route | key | status | p10 µs | median µs | p90 µs |');
    console.log('|---|---|---:|---:|---:|---:|');
    for (const route of routes) {
      const times = new Map<string, number[]>(Object.keys(kinds).map((kind) => [kind, []]));
      const statuses = new Map<string, number>();
      for (let i = 0; i < SAMPLES + 200; i++) {
        const order = Object.keys(kinds).sort(() => Math.random() - 0.5);
        for (const kind of order) {
          const headers = { ...route.headers, 'x-api-key': kinds[kind]() };
          const started = process.hrtime.bigint();
          const response = await pool.request({ method: 'GET', path: route.path, headers });
          await response.body.dump();
          const micros = Number(process.hrtime.bigint() - started) / 1000;
          statuses.set(kind, response.statusCode);
          if (i >= 200) times.get(kind)!.push(micros);
        }
      }
      const medians = new Map<string, number>();
      for (const [kind, values] of times) {
        const sorted = values.sort((a, b) => a - b);
        medians.set(kind, percentile(sorted, 50));
        console.log(
          `| ${route.name} | ${kind} | ${statuses.get(kind)} | ${percentile(sorted, 10).toFixed(0)} | ${percentile(sorted, 50).toFixed(0)} | ${percentile(sorted, 90).toFixed(0)} |`,
        );
      }
      const unknown = ['unknown, last digit differs', 'unknown, first digit differs', 'unknown, random'].map((kind) => medians.get(kind)!);
      console.log(`| ${route.name} | spread of the three unknown-key medians | | | ${(Math.max(...unknown) - Math.min(...unknown)).toFixed(1)} | |`);
    }
    await pool.close();
    await stop(service.child);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
