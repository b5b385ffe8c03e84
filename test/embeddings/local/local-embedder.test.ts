import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { EmbedderError } from '../../../src/embeddings/embedder.js';
import { LocalEmbedder } from '../../../src/embeddings/local/local-embedder.js';
import { ModelFolderError, readModelFolder } from '../../../src/embeddings/local/model-folder.js';
import { onnxRuntimeInstalled } from '../../../src/embeddings/local/onnx-runtime.js';
import { WordPieceTokenizer } from '../../../src/embeddings/local/wordpiece.js';
import { type EmbeddingTables, embeddingModel, SPECIAL_TOKENS, tokenizerJson, writeModelFolder } from '../../support/onnx-model.js';

const WORDS = ['data', '##base', 'breach', 'notification', 'within', '72', 'hours', 'personal', 'controller', 'the', 'of', '.'];
const HIDDEN = 8;
const scratch = mkdtempSync(join(tmpdir(), 'local-model-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function folder(name: string, pooling?: 'mean' | 'cls'): { dir: string; tables: EmbeddingTables } {
  const { bytes, tables } = embeddingModel(SPECIAL_TOKENS.length + WORDS.length, HIDDEN);
  return { dir: writeModelFolder(join(scratch, name), { model: bytes, tokenizer: tokenizerJson(WORDS), hidden: HIDDEN, pooling }), tables };
}

/** What the model computes, pooled and normalised, worked out here without it. */
function expected(dir: string, tables: EmbeddingTables, text: string, pooling: 'mean' | 'cls'): number[] {
  const { ids } = new WordPieceTokenizer(readModelFolder(dir).tokenizer).encode(text);
  const rows = (pooling === 'cls' ? ids.slice(0, 1) : ids).map((id) =>
    Array.from({ length: HIDDEN }, (_, d) => tables.word[id * HIDDEN + d] + tables.type[d]),
  );
  const mean = Array.from({ length: HIDDEN }, (_, d) => rows.reduce((sum, row) => sum + row[d], 0) / rows.length);
  const length = Math.hypot(...mean);
  return mean.map((value) => value / length);
}

function assertClose(actual: Float32Array, wanted: number[]): void {
  assert.equal(actual.length, wanted.length);
  for (const [d, value] of actual.entries()) assert.ok(Math.abs(value - wanted[d]) < 1e-5, `component ${d}: ${value} against ${wanted[d]}`);
}

const runtime = onnxRuntimeInstalled() ? {} : { skip: 'onnxruntime-node is not installed (npm run add:local-model)' };

describe('a model inside the service (EMBEDDINGS_MODEL_DIR)', runtime, () => {
  it('mean-pools the unpadded positions and normalises, batched over worker threads, in the texts’ order', async () => {
    const { dir, tables } = folder('mean', 'mean');
    const embedder = LocalEmbedder.open(dir, { threads: 2, batchSize: 3 });
    try {
      await embedder.ready;
      assert.equal(embedder.model, 'mean');
      assert.equal(embedder.dimensions, HIDDEN);
      // Of different lengths, so that batches pad; more texts than one batch, so that both workers run.
      const texts = [
        'the data',
        'personal database breach notification within 72 hours',
        'controller',
        'of the controller .',
        'breach',
        'data of the breach',
        'hours',
      ];
      const vectors = await embedder.embed(texts);
      assert.equal(vectors.length, texts.length);
      for (const [index, vector] of vectors.entries()) assertClose(vector, expected(dir, tables, texts[index], 'mean'));
      assert.deepEqual(await embedder.embed([]), []);
    } finally {
      await embedder.close();
    }
  });

  it('takes the [CLS] state when 1_Pooling/config.json says so', async () => {
    const { dir, tables } = folder('cls', 'cls');
    const embedder = LocalEmbedder.open(dir, { threads: 1, batchSize: 16 });
    try {
      const [vector] = await embedder.embed(['personal data breach']);
      assertClose(vector, expected(dir, tables, 'personal data breach', 'cls'));
    } finally {
      await embedder.close();
    }
  });

  it('refuses a folder with a file missing or malformed, naming the file', () => {
    const { dir } = folder('broken');
    rmSync(join(dir, 'tokenizer.json'));
    assert.throws(
      () => LocalEmbedder.open(dir, { threads: 1, batchSize: 8 }),
      (error: Error) => error instanceof ModelFolderError && error.message === `${join(dir, 'tokenizer.json')} is missing`,
    );
    writeFileSync(join(dir, 'tokenizer.json'), '{"model": ');
    assert.throws(
      () => readModelFolder(dir),
      (error: Error) => error.message.startsWith(`${join(dir, 'tokenizer.json')} is not valid JSON`),
    );
    writeFileSync(join(dir, 'config.json'), '{}');
    assert.throws(() => readModelFolder(dir), /config\.json has no hidden_size/);
    rmSync(join(dir, 'onnx'), { recursive: true });
    assert.throws(() => readModelFolder(dir), /model\.onnx is missing/);
    assert.throws(() => readModelFolder(join(scratch, 'nowhere')), /nowhere does not exist/);
  });

  it('reports a model file that is not ONNX when it loads, naming it, and every embed says so', async () => {
    const { dir } = folder('not-onnx');
    writeFileSync(join(dir, 'onnx', 'model.onnx'), 'this is not a model');
    const embedder = LocalEmbedder.open(dir, { threads: 2, batchSize: 8 });
    try {
      await assert.rejects(
        embedder.ready,
        (error: Error) =>
          error instanceof ModelFolderError && error.message.startsWith(`${join(dir, 'onnx', 'model.onnx')} could not be loaded as an ONNX model`),
      );
      await assert.rejects(embedder.embed(['data']), (error: Error) => error instanceof EmbedderError && /could not be loaded/.test(error.message));
    } finally {
      await embedder.close();
    }
  });
});
