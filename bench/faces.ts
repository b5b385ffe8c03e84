// bench:faces — the embedded face engine on the shared face set (../shared/datasets/faces, 101
// photos of 21 people): enroll the first image of each person with the CLI, search with every other
// image through POST /face/search (threshold 0, top_k 1) and count top-1 hits, a 422 (no face)
// counting as a miss; the same-person and different-person descriptor distances; latency p50/p99
// of one search at a time; images/s with 1 and 2 workers (4 searches in flight); the service's RSS.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distance } from '../src/faces/engine/matching.js';
import { FaceEnginePool } from '../src/faces/engine/pool.js';
import { CLI, machineLine, ROOT, start, stop } from './lib.js';

const DATASET = process.env.FACES_DIR ?? join(ROOT, '../shared/datasets/faces');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))];
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

async function main(): Promise<void> {
  const labels = readFileSync(join(DATASET, 'labels.csv'), 'utf8')
    .split('\n')
    .slice(1)
    .filter(Boolean)
    .map((line) => {
      const [file, identity] = line.split(',');
      return { file: file!, identity: identity! };
    });
  const enrolled = new Map<string, string>();
  for (const { file, identity } of labels) if (!enrolled.has(identity)) enrolled.set(identity, file);
  const probes = labels.filter(({ file, identity }) => enrolled.get(identity) !== file);
  console.log(`\n${machineLine('bench:faces')}`);
  console.log(`${labels.length} images of ${enrolled.size} people: ${enrolled.size} enrolled (the first of each), ${probes.length} searched\n`);

  // Distances, straight from the engine.
  const pool = new FaceEnginePool(2);
  await pool.ready;
  const described = await Promise.all(
    labels.map(async (label) => ({ ...label, description: await pool.describe(readFileSync(join(DATASET, label.file))) })),
  );
  await pool.close();
  const faces = described.filter((entry) => entry.description.kind === 'face') as Array<
    (typeof described)[number] & { description: { kind: 'face'; descriptor: number[]; padded: boolean } }
  >;
  const same: number[] = [];
  const different: number[] = [];
  for (let a = 0; a < faces.length; a++) {
    for (let b = a + 1; b < faces.length; b++) {
      (faces[a].identity === faces[b].identity ? same : different).push(distance(faces[a].description.descriptor, faces[b].description.descriptor));
    }
  }
  same.sort((x, y) => x - y);
  different.sort((x, y) => x - y);
  console.log(
    `faces found: ${faces.length} of ${labels.length} (${faces.filter((entry) => entry.description.padded).length} only inside a grey border); no face: ${
      described
        .filter((entry) => entry.description.kind === 'no-face')
        .map((entry) => entry.file)
        .join(', ') || 'none'
    }`,
  );
  console.log(
    `same-person distances (${same.length} pairs): median ${percentile(same, 0.5).toFixed(3)}, p95 ${percentile(same, 0.95).toFixed(3)}, max ${percentile(same, 1).toFixed(3)}`,
  );
  console.log(
    `different-person distances (${different.length} pairs): p01 ${percentile(different, 0.01).toFixed(3)}, p05 ${percentile(different, 0.05).toFixed(3)}, median ${percentile(different, 0.5).toFixed(3)}\n`,
  );

  for (const workers of [1, 2]) {
    const work = mkdtempSync(join(tmpdir(), 'bench-faces-'));
    try {
      const env = {
        DATA_DIR: join(work, 'data'),
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_S: '0',
        SEED_DEMO: 'false',
        FACE_WORKERS: String(workers),
      };
      const manifest = join(work, 'gallery.jsonl');
      writeFileSync(
        manifest,
        [...enrolled]
          .map(([identity, file]) => JSON.stringify({ doc_id: identity, image: join(DATASET, file), face_file: `https://faces.example/${file}` }))
          .join('\n'),
      );
      const run = (...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
      run('faces', 'enroll', manifest);
      const key = JSON.parse(run('keys', 'create', '--credits', '1000000', '--json')).key as string;
      const service = await start([CLI, 'serve'], env, null);
      const search = async (file: string) => {
        const started = performance.now();
        const response = await fetch(`${service.url}/face/search`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ image_b64: readFileSync(join(DATASET, file)).toString('base64'), threshold: 0, top_k: 1 }),
        });
        const body = (await response.json()) as { matches?: Array<{ doc_id: string }> };
        return { status: response.status, top: body.matches?.[0]?.doc_id, ms: performance.now() - started };
      };
      const sequential = [];
      for (const probe of probes) sequential.push({ ...probe, ...(await search(probe.file)) });
      const hits = sequential.filter((result) => result.status === 200 && result.top === result.identity).length;
      const latencies = sequential.map((result) => result.ms).sort((a, b) => a - b);
      const started = performance.now();
      const queue = [...probes];
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let next = queue.shift(); next; next = queue.shift()) await search(next.file);
        }),
      );
      const imagesPerSecond = probes.length / ((performance.now() - started) / 1000);
      console.log(
        `FACE_WORKERS=${workers}: top-1 ${hits}/${probes.length} = ${((100 * hits) / probes.length).toFixed(1)}% (threshold 0; 422: ${sequential.filter((r) => r.status === 422).length}, misses: ${
          sequential
            .filter((r) => r.status === 200 && r.top !== r.identity)
            .map((r) => `${r.file}->${r.top}`)
            .join(' ') || 'none'
        })`,
      );
      console.log(
        `  one search at a time: p50 ${percentile(latencies, 0.5).toFixed(0)} ms, p99 ${percentile(latencies, 0.99).toFixed(0)} ms; 4 in flight: ${imagesPerSecond.toFixed(2)} images/s; service RSS ${rssMiB(service.child.pid!).toFixed(0)} MiB`,
      );
      await stop(service.child);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

await main();
