// A model worker: loads the folder's ONNX model on one thread and answers batches of texts with
// their pooled, normalised vectors, laid end to end (transferred, not copied).
import { parentPort, workerData } from 'node:worker_threads';
import type { ModelFolder } from './model-folder.js';
import { loadOnnxRuntime, type OnnxSession } from './onnx-runtime.js';
import { pooledVectors } from './pooling.js';
import { WordPieceTokenizer } from './wordpiece.js';

export interface BatchRequest {
  id: number;
  texts: string[];
}

export type WorkerMessage =
  | { kind: 'ready' }
  | { kind: 'load-failed'; message: string }
  | { kind: 'vectors'; id: number; vectors: Float32Array }
  | { kind: 'failed'; id: number; message: string };

/** The inputs of a BERT-family export; a model asking for another cannot be fed. */
const KNOWN_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);

const folder = (workerData as { folder: ModelFolder }).folder;
const port = parentPort as NonNullable<typeof parentPort>;
const ort = loadOnnxRuntime();
const tokenizer = new WordPieceTokenizer(folder.tokenizer);

async function load(): Promise<{ session: OnnxSession; output: string } | string> {
  let session: OnnxSession;
  try {
    session = await ort.InferenceSession.create(folder.modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
  } catch (error) {
    return `${folder.modelPath} could not be loaded as an ONNX model: ${(error as Error).message}`;
  }
  const unknown = session.inputNames.filter((name) => !KNOWN_INPUTS.has(name));
  if (unknown.length > 0 || !session.inputNames.includes('input_ids'))
    return `${folder.modelPath} takes ${JSON.stringify(session.inputNames)}; a BERT-style model takes input_ids, attention_mask and token_type_ids`;
  const output = session.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : session.outputNames[0];
  return { session, output };
}

async function embed(session: OnnxSession, output: string, texts: string[]): Promise<Float32Array> {
  const encodings = texts.map((text) => tokenizer.encode(text));
  const sequence = Math.max(1, ...encodings.map((encoding) => encoding.ids.length));
  const dims = [texts.length, sequence];
  const ids = new BigInt64Array(texts.length * sequence);
  const mask = new BigInt64Array(texts.length * sequence);
  const types = new BigInt64Array(texts.length * sequence);
  encodings.forEach((encoding, row) => {
    encoding.ids.forEach((id, position) => {
      ids[row * sequence + position] = BigInt(id);
      mask[row * sequence + position] = 1n;
      types[row * sequence + position] = BigInt(encoding.typeIds[position]);
    });
  });
  const tensors = {
    input_ids: new ort.Tensor('int64', ids, dims),
    attention_mask: new ort.Tensor('int64', mask, dims),
    token_type_ids: new ort.Tensor('int64', types, dims),
  };
  const feeds = Object.fromEntries(session.inputNames.map((name) => [name, tensors[name as keyof typeof tensors]]));
  const states = (await session.run(feeds))[output];
  if (states.dims.length !== 3 || states.dims[2] !== folder.dimensions || !(states.data instanceof Float32Array))
    throw new Error(
      `${folder.modelPath} answered ${output} of shape [${states.dims.join(', ')}]; [batch, sequence, ${folder.dimensions}] float32 was expected (config.json's hidden_size)`,
    );
  const vectors = pooledVectors(states.data, states.dims, mask, folder.pooling);
  const flat = new Float32Array(vectors.length * folder.dimensions);
  for (const [row, vector] of vectors.entries()) flat.set(vector, row * folder.dimensions);
  return flat;
}

const loaded = await load();
if (typeof loaded === 'string') port.postMessage({ kind: 'load-failed', message: loaded } satisfies WorkerMessage);
else {
  port.on('message', (request: BatchRequest) => {
    embed(loaded.session, loaded.output, request.texts).then(
      (vectors) => port.postMessage({ kind: 'vectors', id: request.id, vectors } satisfies WorkerMessage, [vectors.buffer as ArrayBuffer]),
      (error: unknown) => port.postMessage({ kind: 'failed', id: request.id, message: (error as Error).message } satisfies WorkerMessage),
    );
  });
  port.postMessage({ kind: 'ready' } satisfies WorkerMessage);
}
