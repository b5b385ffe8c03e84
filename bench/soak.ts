// soak — mixed traffic (query, document, credits, face search against a test downstream) at
// about 70% of the maximum measured at the start of the run, for SOAK_MINUTES (default 10).
// Prints throughput, p99 and errors per minute and the service's RSS over time, then audits the
// ledger. Exits 1 on any 5xx or connection error, an inconsistent ledger, or RSS that keeps
// growing: a leak is the median RSS of the last minute above that of minute 2 (after warm-up)
// by more than 32 MiB and 15%.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { CLI, machineLine, median, start, stop } from './lib.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 50);
const LOAD_SHARE = 0.7;
const MiB = 1024 * 1024;

function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** A stand-in biometric service: answers every search with two matches. */
async function startDownstream(): Promise<{ url: string; close: () => void }> {
  const body = JSON.stringify({
    matches: [
      { doc_id: 'face-1', confidence: 0.91 },
      { doc_id: 'face-2', confidence: 0.62 },
    ],
  });
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/search`, close: () => server.close() };
}

function mixedRequests(key: string): autocannon.Request[] {
  const json = { 'x-api-key': key, 'content-type': 'application/json' };
  const image = Buffer.alloc(2048, 7).toString('base64');
  return [
    { method: 'POST', path: '/query', headers: json, body: JSON.stringify({ query: 'personal data breach notification', top_k: 10 }) },
    { method: 'GET', path: '/document', headers: { 'x-api-key': key, 'svc-doc-id': 'eu-gdpr-art17' } },
    { method: 'GET', path: '/credits', headers: { 'x-api-key': key } },
    { method: 'POST', path: '/face/search', headers: json, body: JSON.stringify({ image_b64: image, top_k: 2 }) },
  ];
}

interface Minute {
  requestsPerSecond: number;
  p99Ms: number;
  serverErrors: number;
  otherNon2xx: number;
  connectionErrors: number;
  rssMiB: number[];
}

async function run(url: string, key: string, seconds: number, rate?: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: mixedRequests(key),
    ...(rate ? { overallRate: rate } : {}),
  });
}

function count(result: autocannon.Result, test: (status: number) => boolean): number {
  return Object.entries(result.statusCodeStats ?? {})
    .filter(([status]) => test(Number(status)))
    .reduce((sum, [, stats]) => sum + (stats as { count: number }).count, 0);
}

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), 'soak-'));
  const downstream = await startDownstream();
  const env = {
    DATA_DIR: join(work, 'data'),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_S: '0',
    FACE_SERVICE_URL: downstream.url,
  };
  const cli = (...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  try {
    const seeded = await start([CLI, 'serve'], { ...env, SEED_DEMO: 'true' });
    const key = /Demo API key[^:]*: ([0-9a-f]{64})/.exec(seeded.output())![1];
    await stop(seeded.child);
    cli('keys', 'topup', key, '--credits', '1000000000');

    const service = await start([CLI, 'serve'], env, null);
    const pid = service.child.pid!;
    const calibration = await run(service.url, key, 15);
    const rate = Math.round(calibration.requests.average * LOAD_SHARE);
    console.log(`\n${machineLine('soak')}`);
    console.log(
      `maximum ${Math.round(calibration.requests.average)} req/s (15 s, ${CONNECTIONS} connections, mix: query, document, credits, face search);` +
        ` soaking at ${rate} req/s for ${MINUTES} min\n`,
    );
    console.log('| minute | req/s | p99 ms | 5xx | other non-2xx | connection errors | RSS MiB (min–max) |');
    console.log('|---:|---:|---:|---:|---:|---:|---|');
    const minutes: Minute[] = [];
    for (let minute = 1; minute <= MINUTES; minute++) {
      const rssMiB: number[] = [];
      const sampler = setInterval(() => rssMiB.push(rssOf(pid) / MiB), 5000);
      const result = await run(service.url, key, 60, rate);
      clearInterval(sampler);
      rssMiB.push(rssOf(pid) / MiB);
      const row: Minute = {
        requestsPerSecond: Math.round(result.requests.average),
        p99Ms: result.latency.p99,
        serverErrors: count(result, (status) => status >= 500),
        otherNon2xx: count(result, (status) => status < 200 || (status >= 300 && status < 500)),
        connectionErrors: result.errors + result.timeouts,
        rssMiB,
      };
      minutes.push(row);
      console.log(
        `| ${minute} | ${row.requestsPerSecond} | ${row.p99Ms} | ${row.serverErrors} | ${row.otherNon2xx} | ${row.connectionErrors} | ` +
          `${Math.min(...rssMiB).toFixed(0)}–${Math.max(...rssMiB).toFixed(0)} |`,
      );
    }
    await stop(service.child);
    const audit = JSON.parse(cli('audit', '--json')) as { consistent: boolean };

    const failures: string[] = [];
    const serverErrors = minutes.reduce((sum, row) => sum + row.serverErrors + row.connectionErrors, 0);
    if (serverErrors > 0) failures.push(`${serverErrors} 5xx answers or connection errors`);
    if (!audit.consistent) failures.push('the ledger audit found a difference');
    if (minutes.length >= 3) {
      const warm = median(minutes[1].rssMiB);
      const last = median(minutes.at(-1)!.rssMiB);
      console.log(`\nRSS median: minute 2 ${warm.toFixed(0)} MiB, last minute ${last.toFixed(0)} MiB`);
      if (last - warm > Math.max(32, warm * 0.15)) failures.push(`RSS grew from ${warm.toFixed(0)} to ${last.toFixed(0)} MiB`);
    }
    console.log(`ledger audit: ${audit.consistent ? 'consistent' : 'INCONSISTENT'}`);
    console.log(failures.length === 0 ? 'soak: PASS' : `soak: FAIL (${failures.join('; ')})`);
    return failures.length === 0 ? 0 : 1;
  } finally {
    downstream.close();
    rmSync(work, { recursive: true, force: true });
  }
}

process.exitCode = await main();
