// Sends requests one at a time and prints each latency in milliseconds, as JSON. A process of its
// own, so that the bench's own garbage collection is not in the figures.
// Usage: node bench/sequential-client.mjs URL REQUESTS_JSON_FILE PASSES
import { readFileSync } from 'node:fs';
import { request } from 'undici';

const [url, file, passes] = process.argv.slice(2);
const requests = JSON.parse(readFileSync(file, 'utf8'));
const latencies = [];
for (let pass = 0; pass < Number(passes); pass++) {
  for (const one of requests) {
    const started = performance.now();
    const response = await request(`${url}${one.path}`, { method: one.method, headers: one.headers, body: one.body });
    await response.body.arrayBuffer();
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}`);
    if (pass === Number(passes) - 1) latencies.push(performance.now() - started);
  }
}
process.stdout.write(JSON.stringify(latencies));
