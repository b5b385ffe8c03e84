// ONNX models written by the tests themselves, with the signature of Hugging Face's BERT-family
// exports (input_ids, attention_mask, token_type_ids in; last_hidden_state out), and a WordPiece
// tokenizer.json beside them. No weights are downloaded: a test model's are seeded random numbers.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { random as seededRandom } from './random.js';

/** Protocol buffer encoding, as far as onnx.proto's messages need it. */
class Message {
  private readonly parts: Buffer[] = [];

  private key(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  private varint(value: number | bigint): void {
    let rest = BigInt.asUintN(64, BigInt(value));
    const bytes: number[] = [];
    do {
      const low = Number(rest & 0x7fn);
      rest >>= 7n;
      bytes.push(rest > 0n ? low | 0x80 : low);
    } while (rest > 0n);
    this.parts.push(Buffer.from(bytes));
  }

  int(field: number, value: number): this {
    this.key(field, 0);
    this.varint(value);
    return this;
  }

  float(field: number, value: number): this {
    this.key(field, 5);
    const bytes = Buffer.alloc(4);
    bytes.writeFloatLE(value);
    this.parts.push(bytes);
    return this;
  }

  bytes(field: number, value: Buffer | Uint8Array | string): this {
    const bytes = typeof value === 'string' ? Buffer.from(value) : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    this.key(field, 2);
    this.varint(bytes.length);
    this.parts.push(bytes);
    return this;
  }

  message(field: number, value: Message): this {
    return this.bytes(field, value.encode());
  }

  encode(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const FLOAT = 1;
const INT64 = 7;

type Attribute = { name: string; int: number } | { name: string; float: number } | { name: string; ints: number[] };

/** A graph under construction: named initialisers and nodes, each node's output a fresh name. */
class Graph {
  private readonly nodes: Message[] = [];
  private readonly initializers: Message[] = [];
  private next = 0;

  constant(values: Float32Array | BigInt64Array, dims: number[]): string {
    const name = `w${this.next++}`;
    const tensor = new Message();
    for (const dim of dims) tensor.int(1, dim);
    tensor
      .int(2, values instanceof Float32Array ? FLOAT : INT64)
      .bytes(8, name)
      .bytes(9, new Uint8Array(values.buffer));
    this.initializers.push(tensor);
    return name;
  }

  random(random: () => number, dims: number[], scale: number): string {
    const values = new Float32Array(dims.reduce((a, b) => a * b, 1));
    for (let i = 0; i < values.length; i++) values[i] = (random() * 2 - 1) * scale;
    return this.constant(values, dims);
  }

  op(type: string, inputs: string[], attributes: Attribute[] = [], output = `t${this.next++}`): string {
    const node = new Message();
    for (const input of inputs) node.bytes(1, input);
    node
      .bytes(2, output)
      .bytes(3, `n${this.next++}`)
      .bytes(4, type);
    for (const attribute of attributes) {
      const encoded = new Message().bytes(1, attribute.name);
      if ('int' in attribute) encoded.int(3, attribute.int).int(20, 2);
      else if ('float' in attribute) encoded.float(2, attribute.float).int(20, 1);
      else {
        for (const value of attribute.ints) encoded.int(8, value);
        encoded.int(20, 7);
      }
      node.message(5, encoded);
    }
    this.nodes.push(node);
    return output;
  }

  /** The model's bytes: the BERT signature, ONNX IR 8, opset 17. */
  model(hidden: number): Buffer {
    const graph = new Message();
    for (const node of this.nodes) graph.message(1, node);
    graph.bytes(2, 'test-model');
    for (const initializer of this.initializers) graph.message(5, initializer);
    for (const name of ['input_ids', 'attention_mask', 'token_type_ids']) graph.message(11, valueInfo(name, INT64, ['batch', 'sequence']));
    graph.message(12, valueInfo('last_hidden_state', FLOAT, ['batch', 'sequence', hidden]));
    return new Message().int(1, 8).bytes(2, 'metered-search tests').message(8, new Message().bytes(1, '').int(2, 17)).message(7, graph).encode();
  }
}

function valueInfo(name: string, elementType: number, dims: Array<string | number>): Message {
  const shape = new Message();
  for (const dim of dims) shape.message(1, typeof dim === 'number' ? new Message().int(1, dim) : new Message().bytes(2, dim));
  return new Message().bytes(1, name).message(2, new Message().message(1, new Message().int(1, elementType).message(2, shape)));
}

/** What a plain computation of the embedding model needs: its two tables. */
export interface EmbeddingTables {
  word: Float32Array;
  type: Float32Array;
  hidden: number;
}

/**
 * The smallest model of the signature: last_hidden_state[b, s] = (word[input_ids[b, s]] +
 * type[token_type_ids[b, s]]) x attention_mask[b, s]. Its tables are returned, so that a test can
 * pool the same numbers itself.
 */
export function embeddingModel(vocabulary: number, hidden: number, seed = 7): { bytes: Buffer; tables: EmbeddingTables } {
  const random = seededRandom(seed);
  const word = Float32Array.from({ length: vocabulary * hidden }, () => random() * 2 - 1);
  const type = Float32Array.from({ length: 2 * hidden }, () => random() * 2 - 1);
  const graph = new Graph();
  const words = graph.op('Gather', [graph.constant(word, [vocabulary, hidden]), 'input_ids']);
  const types = graph.op('Gather', [graph.constant(type, [2, hidden]), 'token_type_ids']);
  const mask = graph.op('Unsqueeze', [
    graph.op('Cast', ['attention_mask'], [{ name: 'to', int: FLOAT }]),
    graph.constant(BigInt64Array.of(-1n), [1]),
  ]);
  graph.op('Mul', [graph.op('Add', [words, types]), mask], [], 'last_hidden_state');
  return { bytes: graph.model(hidden), tables: { word, type, hidden } };
}

export interface TransformerShape {
  vocabulary: number;
  hidden: number;
  layers: number;
  heads: number;
  intermediate: number;
}

/** all-MiniLM-L6-v2's shape: BERT's vocabulary, 6 layers of 384 with 12 heads and a 1,536-wide feed-forward. */
export const MINILM_SHAPE: TransformerShape = { vocabulary: 30_522, hidden: 384, layers: 6, heads: 12, intermediate: 1536 };

/**
 * A BERT encoder of `shape` with random weights: embeddings, then per layer self-attention masked
 * by attention_mask and a GELU feed-forward, each with its residual and layer norm. It costs what a
 * real model of that shape costs (its position table, a gather, is left out).
 */
export function transformerModel(shape: TransformerShape, seed = 11): Buffer {
  const random = seededRandom(seed);
  const { vocabulary, hidden, layers, heads, intermediate } = shape;
  const head = hidden / heads;
  const graph = new Graph();
  const ones = graph.constant(new Float32Array(hidden).fill(1), [hidden]);
  const zeros = graph.constant(new Float32Array(hidden), [hidden]);
  const norm = (input: string) =>
    graph.op(
      'LayerNormalization',
      [input, ones, zeros],
      [
        { name: 'epsilon', float: 1e-12 },
        { name: 'axis', int: -1 },
      ],
    );
  const dense = (input: string, from: number, to: number) =>
    graph.op('Add', [graph.op('MatMul', [input, graph.random(random, [from, to], 0.05)]), graph.random(random, [to], 0.02)]);
  const scalar = (value: number) => graph.constant(Float32Array.of(value), []);
  let states = norm(
    graph.op('Add', [
      graph.op('Gather', [graph.random(random, [vocabulary, hidden], 0.05), 'input_ids']),
      graph.op('Gather', [graph.random(random, [2, hidden], 0.05), 'token_type_ids']),
    ]),
  );
  // (1 - mask) x -10000 on the scores of padding, as BERT's extended attention mask.
  const maskFloat = graph.op('Cast', ['attention_mask'], [{ name: 'to', int: FLOAT }]);
  const maskBias = graph.op('Unsqueeze', [
    graph.op('Mul', [graph.op('Sub', [scalar(1), maskFloat]), scalar(-10_000)]),
    graph.constant(BigInt64Array.of(1n, 2n), [2]),
  ]);
  const splitHeads = graph.constant(BigInt64Array.of(0n, 0n, BigInt(heads), BigInt(head)), [4]);
  const joinHeads = graph.constant(BigInt64Array.of(0n, 0n, BigInt(hidden)), [3]);
  const toHeads = (input: string, perm: number[]) =>
    graph.op('Transpose', [graph.op('Reshape', [dense(input, hidden, hidden), splitHeads])], [{ name: 'perm', ints: perm }]);
  for (let layer = 0; layer < layers; layer++) {
    const query = toHeads(states, [0, 2, 1, 3]);
    const key = toHeads(states, [0, 2, 3, 1]);
    const value = toHeads(states, [0, 2, 1, 3]);
    const scores = graph.op('Add', [graph.op('Mul', [graph.op('MatMul', [query, key]), scalar(1 / Math.sqrt(head))]), maskBias]);
    const attended = graph.op('MatMul', [graph.op('Softmax', [scores], [{ name: 'axis', int: -1 }]), value]);
    const merged = graph.op('Reshape', [graph.op('Transpose', [attended], [{ name: 'perm', ints: [0, 2, 1, 3] }]), joinHeads]);
    states = norm(graph.op('Add', [dense(merged, hidden, hidden), states]));
    const widened = dense(states, hidden, intermediate);
    const gelu = graph.op('Mul', [
      graph.op('Mul', [widened, scalar(0.5)]),
      graph.op('Add', [graph.op('Erf', [graph.op('Mul', [widened, scalar(Math.SQRT1_2)])]), scalar(1)]),
    ]);
    states = norm(graph.op('Add', [dense(gelu, intermediate, hidden), states]));
  }
  graph.op('Identity', [states], [], 'last_hidden_state');
  return graph.model(hidden);
}

/** The special tokens first, as BERT's vocabulary numbers them differently; any words after them. */
export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

/**
 * A BERT-style tokenizer.json (BertNormalizer lowercasing, BertPreTokenizer, WordPiece with "##",
 * [CLS] ... [SEP]) over `words`, numbered after SPECIAL_TOKENS; `maxLength` as its truncation.
 */
export function tokenizerJson(words: readonly string[], maxLength: number | null = 128): Record<string, unknown> {
  const vocab = Object.fromEntries([...SPECIAL_TOKENS, ...words].map((token, id) => [token, id]));
  const special = (token: string) => ({ id: token, ids: [vocab[token]], tokens: [token] });
  return {
    version: '1.0',
    truncation: maxLength === null ? null : { direction: 'Right', max_length: maxLength, strategy: 'LongestFirst', stride: 0 },
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content) => ({
      id: vocab[content],
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [],
      special_tokens: { '[CLS]': special('[CLS]'), '[SEP]': special('[SEP]') },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

/**
 * A model folder in the Hugging Face layout: `onnx/model.onnx`, tokenizer.json, config.json and,
 * when `pooling` is given, sentence-transformers' 1_Pooling/config.json.
 */
export function writeModelFolder(
  dir: string,
  parts: { model: Buffer; tokenizer: Record<string, unknown>; hidden: number; pooling?: 'mean' | 'cls'; name?: string },
): string {
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  writeFileSync(join(dir, 'onnx', 'model.onnx'), parts.model);
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(parts.tokenizer));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({ _name_or_path: parts.name ?? 'test-model', model_type: 'bert', hidden_size: parts.hidden, max_position_embeddings: 512 }),
  );
  if (parts.pooling) {
    mkdirSync(join(dir, '1_Pooling'), { recursive: true });
    writeFileSync(
      join(dir, '1_Pooling', 'config.json'),
      JSON.stringify({
        word_embedding_dimension: parts.hidden,
        pooling_mode_cls_token: parts.pooling === 'cls',
        pooling_mode_mean_tokens: parts.pooling === 'mean',
      }),
    );
  }
  return dir;
}
