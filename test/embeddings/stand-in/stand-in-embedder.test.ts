import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { standInVector, startStandInEmbedder } from '../../../src/embeddings/stand-in/stand-in-embedder.js';

describe('the stand-in embedder, driven by OpenAI\'s own client (the "openai" package)', () => {
  let standIn: Awaited<ReturnType<typeof startStandInEmbedder>>;
  let client: OpenAI;
  before(async () => {
    standIn = await startStandInEmbedder({ dimensions: 64 });
    client = new OpenAI({ apiKey: 'sk-test', baseURL: standIn.url.replace('/embeddings', ''), maxRetries: 0 });
  });
  after(() => standIn.close());

  it("answers the client's default encoding (base64) with the vectors it answers as floats", async () => {
    const texts = ['car data breach', 'employee fired'];
    const byDefault = await client.embeddings.create({ model: 'stand-in', input: texts });
    const asFloats = await client.embeddings.create({ model: 'stand-in', input: texts, encoding_format: 'float' });
    assert.equal(byDefault.data.length, 2);
    byDefault.data.forEach((entry, index) => {
      assert.equal(entry.embedding.length, 64);
      const expected = Float32Array.from(standInVector(texts[index], 64));
      assert.deepEqual(entry.embedding, Array.from(expected));
      assert.deepEqual(Float32Array.from(asFloats.data[index].embedding), expected);
    });
    assert.equal(byDefault.model, 'stand-in');
    assert.ok(byDefault.usage.prompt_tokens > 0);
  });

  it('answers the dimensions asked for, and refuses more than the model has', async () => {
    const short = await client.embeddings.create({ model: 'stand-in', input: 'car', dimensions: 16 });
    assert.equal(short.data[0].embedding.length, 16);
    await assert.rejects(client.embeddings.create({ model: 'stand-in', input: 'car', dimensions: 65 }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.match(error.message, /dimensions/);
      return true;
    });
  });

  it('refuses an empty string, as OpenAI does', async () => {
    for (const input of ['', ['car', '']]) {
      await assert.rejects(client.embeddings.create({ model: 'stand-in', input }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal((error as InstanceType<typeof OpenAI.BadRequestError>).param, 'input');
        return true;
      });
    }
  });

  it('never answers the zero vector: a text of no known word lies on an axis of its own', async () => {
    const [unknown, known] = (await client.embeddings.create({ model: 'stand-in', input: ['sunny skies', 'car'] })).data;
    assert.equal(Math.hypot(...unknown.embedding), 1);
    assert.equal(
      unknown.embedding.reduce((sum, value, index) => sum + value * known.embedding[index], 0),
      0,
    );
  });
});

describe('the stand-in embedder', () => {
  it('answers as the OpenAI API reference documents, and refuses what the API refuses', async () => {
    const standIn = await startStandInEmbedder({ dimensions: 64 });
    try {
      const post = (body: unknown) =>
        fetch(standIn.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const ok = await post({ model: 'stand-in', input: 'car' });
      assert.equal(ok.status, 200);
      const answer = (await ok.json()) as {
        object: string;
        data: Array<{ object: string; index: number; embedding: number[] }>;
        model: string;
        usage: object;
      };
      assert.equal(answer.object, 'list');
      assert.equal(answer.model, 'stand-in');
      assert.deepEqual(Object.keys(answer.usage).sort(), ['prompt_tokens', 'total_tokens']);
      assert.equal(answer.data[0].object, 'embedding');
      assert.equal(answer.data[0].embedding.length, 64);
      const missingModel = await post({ input: ['car'] });
      assert.equal(missingModel.status, 400);
      assert.deepEqual(((await missingModel.json()) as { error: { param: string } }).error.param, 'model');
      assert.equal((await post({ model: 'stand-in', input: [] })).status, 400);
      // "car" and "automobile" land together; "privacy" elsewhere.
      const [car, automobile, privacy] = ['car', 'automobile', 'privacy'].map((text) => standInVector(text, 64));
      const dot = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * b[index], 0);
      assert.equal(dot(car, automobile), 1);
      assert.equal(dot(car, privacy), 0);
    } finally {
      await standIn.close();
    }
  });
});
