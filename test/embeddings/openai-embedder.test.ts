import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { EmbedderError, embeddingKey, textToEmbed } from '../../src/embeddings/embedder.js';
import { OpenAiEmbedder } from '../../src/embeddings/openai-embedder.js';
import { standInVector, startStandInEmbedder } from '../../src/embeddings/stand-in/stand-in-embedder.js';
import { standInEmbeddings } from '../support/helper.js';

interface Seen {
  headers: IncomingMessage['headers'];
  body: { model: string; input: string[]; encoding_format?: string };
}

/** An endpoint that answers each request with the next of `answers` (then as the stand-in would), recording what it was sent. */
async function scriptedEndpoint(answers: Array<{ status: number; headers?: Record<string, string>; body?: string }>) {
  const seen: Seen[] = [];
  const server: Server = createServer(async (request, response) => {
    let raw = '';
    for await (const chunk of request) raw += chunk;
    const body = JSON.parse(raw) as Seen['body'];
    seen.push({ headers: request.headers, body });
    const scripted = answers.shift();
    if (scripted) {
      response.writeHead(scripted.status, { 'content-type': 'application/json', ...scripted.headers });
      response.end(scripted.body ?? '');
      return;
    }
    // Out of order on purpose: the API's `index` says which text each embedding is for.
    const data = body.input.map((text, index) => ({ object: 'embedding', index, embedding: standInVector(text, 8) })).reverse();
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/embeddings`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('OpenAiEmbedder', () => {
  let standIn: Awaited<ReturnType<typeof startStandInEmbedder>>;
  before(async () => {
    standIn = await startStandInEmbedder({ dimensions: 16 });
  });
  after(async () => standIn.close());

  it('sends the OpenAI request shape, in batches, with the API key, and orders the answer by index', async () => {
    const endpoint = await scriptedEndpoint([]);
    try {
      const embedder = new OpenAiEmbedder(standInEmbeddings(endpoint.url, 8, { apiKey: 'sk-test', batchSize: 2 }));
      const vectors = await embedder.embed(['car', 'privacy data', 'truck', 'nothing known']);
      assert.equal(endpoint.seen.length, 2);
      // Asked for as base64; this endpoint answers lists of numbers, which are read as well.
      assert.deepEqual(endpoint.seen[0].body, { model: 'stand-in', input: ['car', 'privacy data'], encoding_format: 'base64' });
      assert.equal(endpoint.seen[0].headers.authorization, 'Bearer sk-test');
      assert.equal(endpoint.seen[0].headers['content-type'], 'application/json');
      assert.deepEqual(
        vectors.map((vector) => Array.from(vector)),
        ['car', 'privacy data', 'truck', 'nothing known'].map((text) => Array.from(Float32Array.from(standInVector(text, 8)))),
      );
    } finally {
      await endpoint.close();
    }
  });

  it('reads base64 float32s as the stand-in sends them, equal to the lists it sends when asked for those', async () => {
    const embedder = new OpenAiEmbedder(standInEmbeddings(standIn.url, 16));
    const [car, privacy] = await embedder.embed(['car', 'privacy data']);
    assert.deepEqual(Array.from(car), Array.from(Float32Array.from(standInVector('car', 16))));
    assert.deepEqual(Array.from(privacy), Array.from(Float32Array.from(standInVector('privacy data', 16))));
  });

  it('asks an endpoint that refuses base64 again for lists of numbers, and from then on only for lists', async () => {
    const refusal = '{"error":{"message":"encoding_format must be float","param":"encoding_format"}}';
    const endpoint = await scriptedEndpoint([{ status: 400, body: refusal }]);
    try {
      const embedder = new OpenAiEmbedder(standInEmbeddings(endpoint.url, 8, { retries: 0 }));
      const [car] = await embedder.embed(['car']);
      assert.deepEqual(Array.from(car), Array.from(Float32Array.from(standInVector('car', 8))));
      await embedder.embed(['truck']);
      assert.deepEqual(
        endpoint.seen.map((seen) => seen.body.encoding_format),
        ['base64', 'float', 'float'],
      );
    } finally {
      await endpoint.close();
    }
  });

  it('asks again for lists every request that was in flight for base64 when the first refusal came', async () => {
    const refusal = '{"error":{"message":"encoding_format must be float"}}';
    const endpoint = await scriptedEndpoint([
      { status: 400, body: refusal },
      { status: 400, body: refusal },
    ]);
    try {
      const embedder = new OpenAiEmbedder(standInEmbeddings(endpoint.url, 8, { retries: 0 }));
      const [[car], [truck]] = await Promise.all([embedder.embed(['car']), embedder.embed(['truck'])]);
      assert.deepEqual(Array.from(car), Array.from(Float32Array.from(standInVector('car', 8))));
      assert.deepEqual(Array.from(truck), Array.from(Float32Array.from(standInVector('truck', 8))));
      assert.deepEqual(
        endpoint.seen.map((seen) => seen.body.encoding_format),
        ['base64', 'base64', 'float', 'float'],
      );
    } finally {
      await endpoint.close();
    }
  });

  it('reports a 400 that lists of numbers do not cure, with what the endpoint said', async () => {
    const tooLong = '{"error":{"message":"input is too long"}}';
    const endpoint = await scriptedEndpoint([
      { status: 400, body: tooLong },
      { status: 400, body: tooLong },
    ]);
    try {
      const embedder = new OpenAiEmbedder(standInEmbeddings(endpoint.url, 8, { retries: 3 }), async () => undefined);
      await assert.rejects(embedder.embed(['car']), /refused the request with 400: .*input is too long/);
      assert.equal(endpoint.seen.length, 2);
    } finally {
      await endpoint.close();
    }
  });

  it('refuses base64 that is not whole float32s, or of the wrong length', async () => {
    const threeBytes = Buffer.from([1, 2, 3]).toString('base64');
    const fourFloats = Buffer.from(Float32Array.from([1, 0, 0, 0]).buffer).toString('base64');
    const cases: Array<[string, RegExp]> = [
      [threeBytes, /answered an embedding that is neither a list of numbers nor base64 of float32s/],
      ['', /answered an embedding that is neither a list of numbers nor base64 of float32s/],
      [fourFloats, /answered vectors of 4 dimensions for model stand-in; EMBEDDINGS_DIMENSIONS is 8/],
    ];
    for (const [embedding, expected] of cases) {
      const endpoint = await scriptedEndpoint([{ status: 200, body: JSON.stringify({ object: 'list', data: [{ index: 0, embedding }] }) }]);
      try {
        await assert.rejects(new OpenAiEmbedder(standInEmbeddings(endpoint.url, 8)).embed(['car']), expected, JSON.stringify(embedding));
      } finally {
        await endpoint.close();
      }
    }
  });

  it('retries 429 and 5xx, waiting what Retry-After says, else backing off', async () => {
    const endpoint = await scriptedEndpoint([{ status: 429, headers: { 'retry-after': '2' } }, { status: 502 }]);
    const waits: number[] = [];
    try {
      const embedder = new OpenAiEmbedder(standInEmbeddings(endpoint.url, 8, { retries: 2 }), async (ms) => waits.push(ms));
      const [vector] = await embedder.embed(['car']);
      assert.equal(vector.length, 8);
      assert.deepEqual(waits, [2000, 400]);
      assert.equal(endpoint.seen.length, 3);
    } finally {
      await endpoint.close();
    }
  });

  it('gives up after its retries, naming the endpoint and the status', async () => {
    const endpoint = await scriptedEndpoint([{ status: 500 }, { status: 500 }]);
    try {
      const embedder = new OpenAiEmbedder(standInEmbeddings(endpoint.url, 8, { retries: 1 }), async () => undefined);
      await assert.rejects(embedder.embed(['car']), (error: Error) => {
        assert.ok(error instanceof EmbedderError);
        assert.equal(error.message, `the embeddings endpoint ${endpoint.url} answered 500 (after 2 attempts)`);
        return true;
      });
    } finally {
      await endpoint.close();
    }
  });

  it('does not retry a 4xx other than 429: the request itself is wrong', async () => {
    const endpoint = await scriptedEndpoint([{ status: 401, body: '{"error":{"message":"Incorrect API key provided"}}' }]);
    try {
      const embedder = new OpenAiEmbedder(standInEmbeddings(endpoint.url, 8, { retries: 3 }), async () => undefined);
      await assert.rejects(embedder.embed(['car']), /refused the request with 401: .*Incorrect API key/);
      assert.equal(endpoint.seen.length, 1);
    } finally {
      await endpoint.close();
    }
  });

  it('an unreachable endpoint, and one too slow, are named in the error', async () => {
    const closed = await scriptedEndpoint([]);
    await closed.close();
    const unreachable = new OpenAiEmbedder(standInEmbeddings(closed.url, 8, { retries: 0 }));
    await assert.rejects(unreachable.embed(['car']), new RegExp(`${closed.url.replace(/[.]/g, '\\.')} is unreachable \\(ECONNREFUSED\\)`));
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const slowUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/v1/embeddings`;
    try {
      const slow = new OpenAiEmbedder(standInEmbeddings(slowUrl, 8, { retries: 0, timeoutMs: 200 }));
      await assert.rejects(slow.embed(['car']), /did not answer within 200 ms/);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    }
  });

  it('refuses an answer of the wrong length or count', async () => {
    const wrongLength = new OpenAiEmbedder(standInEmbeddings(standIn.url, 384));
    await assert.rejects(wrongLength.embed(['car']), /answered vectors of 16 dimensions for model stand-in; EMBEDDINGS_DIMENSIONS is 384/);
    const endpoint = await scriptedEndpoint([{ status: 200, body: JSON.stringify({ object: 'list', data: [] }) }]);
    try {
      await assert.rejects(new OpenAiEmbedder(standInEmbeddings(endpoint.url, 8)).embed(['car']), /answered 0 embeddings for 1 texts/);
    } finally {
      await endpoint.close();
    }
  });

  it('refuses a vector holding NaN or Infinity, or all zeros, naming which text of a batch it was for', async () => {
    const answers = ['[0.5, null, 0.5]', '[0.5, 1e400, 0.5]', '[0, 0, 0]', '[1e39, 1, 1]'];
    for (const embedding of answers) {
      const data = `[{"index": 0, "embedding": [1, 0, 0]}, {"index": 1, "embedding": ${embedding}}]`;
      const endpoint = await scriptedEndpoint([{ status: 200, body: `{"object": "list", "data": ${data}}` }]);
      try {
        const embedder = new OpenAiEmbedder(standInEmbeddings(endpoint.url, 3, { batchSize: 2 }));
        await assert.rejects(embedder.embed(['car', 'truck']), (error: Error) => {
          assert.ok(error instanceof EmbedderError, embedding);
          assert.equal(error.textIndex, 1, embedding);
          assert.match(error.message, /neither a list of numbers|not a finite number|all zeros/, embedding);
          return true;
        });
      } finally {
        await endpoint.close();
      }
    }
  });

  it('keys a vector by model, dimensions and the text embedded: title and text, cut to the configured length', () => {
    const document = { title: 'Automobile recall', text: 'x'.repeat(5000) };
    assert.equal(textToEmbed(document, 30), 'Automobile recall\n\nxxxxxxxxxxx');
    assert.equal(textToEmbed({ title: '', text: 'only text' }, 100), 'only text');
    const key = embeddingKey({ model: 'm', dimensions: 8 }, 'car');
    assert.equal(key, embeddingKey({ model: 'm', dimensions: 8 }, 'car'));
    assert.notEqual(key, embeddingKey({ model: 'other', dimensions: 8 }, 'car'));
    assert.notEqual(key, embeddingKey({ model: 'm', dimensions: 16 }, 'car'));
  });
});
