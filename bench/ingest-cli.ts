// bench:ingest-cli — `metered-search ingest` of INGEST_SIZE documents (default 200,000) of
// bench:search's corpus, spawned on this build's dist/, without an embedding model and with one:
// an OpenAI-shape endpoint on loopback, in this process, that answers at once (bench/instant-embedder.ts's
// 384 numbers per text), asked for base64 as the client asks, and the same endpoint refusing
// base64 (a 400), so that the client asks it for lists of numbers. Alternated INGEST_ROUNDS times
// (default 2), each round in another order. Printed: each ingest's documents per second (the
// CLI's own figure: reading, analysing, embedding and storing, before the indexes are written) and
// the ratios to the lexical ingest. The endpoint shares the machine's cores, as a model served
// beside the service would.
//
//   npm run build && npm run bench:ingest-cli
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { INSTANT_DIMENSIONS, InstantEmbedder } from './instant-embedder.js';
import { CLI, machineLine, median } from './lib.js';
import { words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.INGEST_SIZE ?? 200_000);
const ROUNDS = Number(process.env.INGEST_ROUNDS ?? 2);

type Kind = 'lexical' | 'vectors as base64' | 'vectors as lists of numbers';

async function bodyOf(request: IncomingMessage): Promise<{ input: string[]; encoding_format?: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** POST /v1/embeddings answered at once; `refuseBase64.on` makes it answer a request for base64 with a 400. */
async function instantEndpoint(refuseBase64: { on: boolean }): Promise<{ url: string; close: () => void }> {
  const embedder = new InstantEmbedder();
  const server = createServer(async (request, response) => {
    const body = await bodyOf(request);
    const base64 = body.encoding_format === 'base64';
    if (base64 && refuseBase64.on) {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end('{"error":{"message":"encoding_format must be float","type":"invalid_request_error","param":"encoding_format"}}');
      return;
    }
    const vectors = await embedder.embed(body.input);
    const data = vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? Buffer.from(vector.buffer).toString('base64') : Array.from(vector),
    }));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ object: 'list', data, model: 'instant', usage: { prompt_tokens: 0, total_tokens: 0 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`, close: () => server.close() };
}

/** Spawned, not run synchronously: the endpoint answers from this process's event loop. */
async function ingest(path: string, env: Record<string, string>): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-ingest-cli-data-'));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'ingest', '--json', path], {
      env: { ...process.env, ...env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
    });
    return (JSON.parse(stdout) as { documentsPerSecond: number }).documentsPerSecond;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(machineLine('bench:ingest-cli'));
  const scratch = mkdtempSync(join(tmpdir(), 'bench-ingest-cli-'));
  const refuseBase64 = { on: false };
  const endpoint = await instantEndpoint(refuseBase64);
  try {
    const path = join(scratch, 'corpus.jsonl');
    await writeCorpus(path, SIZE, words());
    const model = { EMBEDDINGS_URL: endpoint.url, EMBEDDINGS_MODEL: 'instant', EMBEDDINGS_DIMENSIONS: String(INSTANT_DIMENSIONS) };
    const kinds: Kind[] = ['lexical', 'vectors as base64', 'vectors as lists of numbers'];
    const rates = new Map<Kind, number[]>(kinds.map((kind) => [kind, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of [...kinds.slice(round % kinds.length), ...kinds.slice(0, round % kinds.length)]) {
        refuseBase64.on = kind === 'vectors as lists of numbers';
        rates.get(kind)?.push(await ingest(path, kind === 'lexical' ? {} : model));
      }
    }
    console.log(`${SIZE.toLocaleString('en')} documents, ${ROUNDS} rounds; documents/s as the CLI reports them (median, each run):`);
    const lexical = median(rates.get('lexical') ?? []);
    for (const kind of kinds) {
      const runs = rates.get(kind) ?? [];
      const ratio = kind === 'lexical' ? '' : `: ${(median(runs) / lexical).toFixed(2)} of lexical`;
      console.log(`  ${kind.padEnd(28)} ${median(runs).toFixed(0)} (${runs.join(', ')})${ratio}`);
    }
  } finally {
    endpoint.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
