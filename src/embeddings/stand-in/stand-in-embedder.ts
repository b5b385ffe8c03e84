import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONCEPTS, conceptOf } from './concepts.js';

/** Vector length when not told: room for every concept of the table. */
export const STAND_IN_DIMENSIONS = 64;
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * A text's vector: one axis per concept of the table (axes past `dimensions` wrap around), each
 * counting the words of that concept; words the table lacks count for nothing. "car" and
 * "automobile" share an axis. A text without a known word lies on the last axis alone (no
 * concept's, at more dimensions than concepts): a model never answers the zero vector.
 */
export function standInVector(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.split(/[^\p{L}\p{N}]+/u)) {
    const axis = word === '' ? undefined : conceptOf(word);
    if (axis !== undefined) vector[axis % dimensions] += 1;
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  if (norm === 0) vector[dimensions - 1] = 1;
  return norm === 0 ? vector : vector.map((value) => value / norm);
}

/** An embedding as `encoding_format` asks: a list of numbers, or base64 of its little-endian float32s (the openai client's default). */
function encoded(vector: number[], format: 'float' | 'base64'): number[] | string {
  if (format === 'float') return vector;
  return Buffer.from(Float32Array.from(vector).buffer).toString('base64');
}

function openAiError(response: ServerResponse, status: number, message: string, param: string | null): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param, code: null } }));
}

async function bodyOf(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * POST /v1/embeddings as OpenAI's API reference gives it: {model, input, encoding_format?,
 * dimensions?} in, {object: "list", data, model, usage} out; an empty input is a 400.
 */
async function answer(request: IncomingMessage, response: ServerResponse, dimensions: number): Promise<void> {
  if (request.method !== 'POST' || request.url?.split('?')[0] !== '/v1/embeddings') {
    openAiError(response, 404, `Unknown request URL: ${request.method} ${request.url}`, null);
    return;
  }
  const raw = await bodyOf(request);
  if (raw === undefined) return openAiError(response, 413, 'Request too large', null);
  let body: { model?: unknown; input?: unknown; encoding_format?: unknown; dimensions?: unknown };
  try {
    body = JSON.parse(raw);
  } catch {
    return openAiError(response, 400, 'We could not parse the JSON body of your request.', null);
  }
  if (typeof body.model !== 'string' || body.model === '') return openAiError(response, 400, 'you must provide a model parameter', 'model');
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0 || input.some((text) => typeof text !== 'string' || text === '')) {
    return openAiError(response, 400, "'input' must be a non-empty string or a non-empty array of non-empty strings", 'input');
  }
  const format = body.encoding_format ?? 'float';
  if (format !== 'float' && format !== 'base64') {
    return openAiError(response, 400, "'encoding_format' must be 'float' or 'base64'", 'encoding_format');
  }
  const length = body.dimensions ?? dimensions;
  if (!Number.isInteger(length) || (length as number) < 1 || (length as number) > dimensions) {
    return openAiError(response, 400, `'dimensions' must be an integer from 1 to ${dimensions} for this model`, 'dimensions');
  }
  const words = (input as string[]).reduce((sum, text) => sum + text.split(/\s+/).length, 0);
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      object: 'list',
      data: (input as string[]).map((text, index) => ({
        object: 'embedding',
        index,
        embedding: encoded(standInVector(text, length as number), format),
      })),
      model: body.model,
      usage: { prompt_tokens: words, total_tokens: words },
    }),
  );
}

/** The stand-in on `port` of `host` (0: any free port); resolves once it listens, with its /v1/embeddings URL. */
export async function startStandInEmbedder(
  options: { host?: string; port?: number; dimensions?: number } = {},
): Promise<{ server: Server; url: string; dimensions: number; close(): Promise<void> }> {
  const dimensions = options.dimensions ?? STAND_IN_DIMENSIONS;
  if (dimensions < 1) throw new Error(`dimensions must be at least 1 (the table has ${CONCEPTS.length} concepts)`);
  const server = createServer((request, response) => {
    answer(request, response, dimensions).catch(() => {
      if (!response.headersSent) openAiError(response, 500, 'The stand-in failed to answer', null);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    server,
    url: `http://${host}:${port}/v1/embeddings`,
    dimensions,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
