// bench:local-model — what a model run inside the service (EMBEDDINGS_MODEL_DIR) costs on this
// machine's CPU: an ONNX model generated here at all-MiniLM-L6-v2's shape (BERT's 30,522-token
// vocabulary, 6 layers of 384, 12 heads; random weights: the arithmetic is a real model's) behind
// a WordPiece tokenizer, run by LocalEmbedder on 1 worker thread and on one per core, alternated
// LOCAL_MODEL_ROUNDS times (default 3):
//   - passages a second, and per core, at 64 tokens (a sentence or two) and at 256 (MiniLM's limit);
//   - one query prompt of 12 tokens: milliseconds, median of 50;
//   - what embedding a million documents would take at the per-core rate, on all cores.
//
//   npm run add:local-model && npm run bench:local-model
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEmbedder } from '../src/embeddings/local/local-embedder.js';
import { onnxRuntimeInstalled } from '../src/embeddings/local/onnx-runtime.js';
import { MINILM_SHAPE, SPECIAL_TOKENS, tokenizerJson, transformerModel, writeModelFolder } from '../test/support/onnx-model.js';
import { random } from '../test/support/random.js';
import { machineLine, median } from './lib.js';
import { words } from './synthetic-corpus.js';

const ROUNDS = Number(process.env.LOCAL_MODEL_ROUNDS ?? 3);
const PASSAGES = Number(process.env.LOCAL_MODEL_PASSAGES ?? 128);
const LENGTHS = [64, 256];

/** `count` passages of `tokens` tokens each ([CLS] and [SEP] included): every word is one token of the vocabulary. */
function passages(vocabulary: string[], count: number, tokens: number, seed: number): string[] {
  const next = random(seed);
  return Array.from({ length: count }, () => Array.from({ length: tokens - 2 }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(' '));
}

async function rate(embedder: LocalEmbedder, texts: string[]): Promise<number> {
  await embedder.embed(texts.slice(0, 4));
  const started = performance.now();
  await embedder.embed(texts);
  return texts.length / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  if (!onnxRuntimeInstalled()) throw new Error('onnxruntime-node is not installed: npm run add:local-model');
  console.log(machineLine('bench:local-model'));
  const cores = availableParallelism();
  const scratch = mkdtempSync(join(tmpdir(), 'bench-local-model-'));
  const vocabulary = words().slice(0, MINILM_SHAPE.vocabulary - SPECIAL_TOKENS.length);
  const dir = writeModelFolder(join(scratch, 'minilm-shape'), {
    model: transformerModel(MINILM_SHAPE),
    tokenizer: tokenizerJson(vocabulary, 256),
    hidden: MINILM_SHAPE.hidden,
    pooling: 'mean',
  });
  const threads = [...new Set([1, cores])];
  const embedders = new Map(threads.map((count) => [count, LocalEmbedder.open(dir, { threads: count, batchSize: 32 })]));
  await Promise.all([...embedders.values()].map((embedder) => embedder.ready));
  const rates = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const tokens of LENGTHS) {
      const texts = passages(vocabulary, PASSAGES, tokens, round * 100 + tokens);
      for (const [count, embedder] of embedders) {
        const key = `${tokens}:${count}`;
        rates.set(key, [...(rates.get(key) ?? []), await rate(embedder, texts)]);
      }
    }
  }
  const one = embedders.get(1) as LocalEmbedder;
  const prompts = passages(vocabulary, 50, 12, 5);
  const promptMs: number[] = [];
  for (const prompt of prompts) {
    const started = performance.now();
    await one.embed([prompt]);
    promptMs.push(performance.now() - started);
  }
  console.log(
    `\n| passages a second (median of ${ROUNDS}) | ${threads.map((count) => `${count} thread${count > 1 ? 's' : ''}`).join(' | ')} | per core |`,
  );
  console.log(`|---|${threads.map(() => '---:').join('|')}|---:|`);
  for (const tokens of LENGTHS) {
    const medians = threads.map((count) => median(rates.get(`${tokens}:${count}`) ?? []));
    const perCore = medians[medians.length - 1] / threads[threads.length - 1];
    console.log(`| ${tokens} tokens | ${medians.map((value) => value.toFixed(1)).join(' | ')} | ${perCore.toFixed(1)} |`);
    console.log(`  a million such documents: ${(1e6 / (perCore * cores) / 3600).toFixed(1)} h on ${cores} cores`);
  }
  console.log(`\none prompt of 12 tokens on 1 thread: ${median(promptMs).toFixed(1)} ms (median of ${prompts.length})`);
  await Promise.all([...embedders.values()].map((embedder) => embedder.close()));
  rmSync(scratch, { recursive: true, force: true });
}

await main();
