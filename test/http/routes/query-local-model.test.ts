import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LocalModelConfig } from '../../../src/embeddings/embedder.js';
import { onnxRuntimeInstalled } from '../../../src/embeddings/local/onnx-runtime.js';
import { spawnServer } from '../../support/child-server.js';
import { createTestApp, json, SAMPLE_DOCUMENTS, type TestContext, tempDir } from '../../support/helper.js';
import { embeddingModel, SPECIAL_TOKENS, tokenizerJson, writeModelFolder } from '../../support/onnx-model.js';

// Every word of the sample documents is in the vocabulary, so the model sees each as itself.
const WORDS = [
  ...new Set(SAMPLE_DOCUMENTS.flatMap((document) => `${document.title} ${document.text}`.toLowerCase().match(/[a-z0-9]+|[^\sa-z0-9]/g) ?? [])),
];
const HIDDEN = 16;

function modelFolder(dir: string): string {
  const { bytes } = embeddingModel(SPECIAL_TOKENS.length + WORDS.length, HIDDEN);
  return writeModelFolder(dir, { model: bytes, tokenizer: tokenizerJson(WORDS), hidden: HIDDEN, pooling: 'mean' });
}

const runtime = onnxRuntimeInstalled() ? {} : { skip: 'onnxruntime-node is not installed (npm run add:local-model)' };

describe('POST /query with a model run inside the service (EMBEDDINGS_MODEL_DIR)', runtime, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'local-model-query-'));
  const config: LocalModelConfig = {
    modelDir: modelFolder(join(scratch, 'bag-of-words')),
    model: undefined,
    threads: 2,
    maxChars: 2000,
    batchSize: 4,
    concurrency: 16,
    breakerFailures: 5,
    breakerCooldownMs: 10_000,
  };
  let context: TestContext;
  let key: string;

  before(async () => {
    context = await createTestApp({ embeddings: config });
    key = await context.createKey(10);
  });
  after(async () => {
    await context.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  const query = (payload: object) => context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload });

  it('ingested documents get the model’s vectors, and a semantic query its prompt’s: a prompt of a document’s words finds it first, charged once', async () => {
    const breach = SAMPLE_DOCUMENTS[1];
    const response = await query({ query: `${breach.title}\n\n${breach.text}`, mode: 'semantic', top_k: 5 });
    assert.equal(response.statusCode, 200, response.body);
    const { documents, total } = json(response).resp.body.hits;
    assert.equal(documents[0].doc_id, breach.docId);
    assert.ok(documents[0].confidence > 0.999, `the same words pool to the same vector: ${documents[0].confidence}`);
    assert.equal(total, SAMPLE_DOCUMENTS.length, 'every document has a vector');
    assert.equal(await context.balanceOf(key), 9);
  });

  it('hybrid fuses the model’s ranking with the lexical one', async () => {
    const response = await query({ query: 'erasure of personal data', mode: 'hybrid', top_k: 3 });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).resp.body.hits.documents[0].doc_id, 'gdpr-17');
  });

  it('a start with the model answers its probe; one whose folder lacks a file, or whose model is not ONNX, stops, naming the file', async () => {
    const data = tempDir();
    try {
      const server = await spawnServer({ DATA_DIR: data.path, LOG_LEVEL: 'info', EMBEDDINGS_MODEL_DIR: config.modelDir, EMBEDDINGS_THREADS: '1' });
      try {
        for (let waited = 0; !/the embedding model answered a start-up probe/.test(server.output()); waited += 50) {
          assert.ok(waited < 20_000, server.output());
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      const noTokenizer = modelFolder(join(scratch, 'no-tokenizer'));
      rmSync(join(noTokenizer, 'tokenizer.json'));
      await assert.rejects(
        spawnServer({ DATA_DIR: data.path, EMBEDDINGS_MODEL_DIR: noTokenizer }),
        new RegExp(`error: ${join(noTokenizer, 'tokenizer.json')} is missing`),
      );
      const notOnnx = modelFolder(join(scratch, 'not-onnx'));
      writeFileSync(join(notOnnx, 'onnx', 'model.onnx'), 'not a model');
      await assert.rejects(
        spawnServer({ DATA_DIR: data.path, EMBEDDINGS_MODEL_DIR: notOnnx }),
        new RegExp(`error: ${join(notOnnx, 'onnx', 'model.onnx')} could not be loaded as an ONNX model`),
      );
    } finally {
      data.remove();
    }
  });
});
