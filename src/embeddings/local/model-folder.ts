import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { readWordPiece, TokenizerFormatError, type WordPieceSettings } from './wordpiece.js';

export type Pooling = 'mean' | 'cls';

/** A model folder in the Hugging Face layout, read and checked: what the embedding workers load. */
export interface ModelFolder {
  dir: string;
  /** The folder's name: the model's name in stored vectors' keys, unless EMBEDDINGS_MODEL names it. */
  name: string;
  modelPath: string;
  tokenizer: WordPieceSettings;
  dimensions: number;
  pooling: Pooling;
}

/** The folder cannot be used; the message names the file and what is wrong with it. */
export class ModelFolderError extends Error {}

/** BERT's position table: no model of the family reads more tokens. */
const DEFAULT_MAX_TOKENS = 512;

/**
 * Reads `dir`: `model.onnx` or `onnx/model.onnx`; tokenizer.json (WordPiece); config.json's
 * hidden_size (the vectors' length) and max_position_embeddings; sentence-transformers'
 * 1_Pooling/config.json (mean or CLS pooling; mean without it) and sentence_bert_config.json's
 * max_seq_length (the tokens embedded; else the tokenizer's truncation, else the positions).
 */
export function readModelFolder(dir: string): ModelFolder {
  const folder = resolve(dir);
  if (!existsSync(folder)) throw new ModelFolderError(`EMBEDDINGS_MODEL_DIR ${folder} does not exist`);
  const modelPath = [join(folder, 'model.onnx'), join(folder, 'onnx', 'model.onnx')].find((path) => existsSync(path));
  if (!modelPath)
    throw new ModelFolderError(
      `${join(folder, 'model.onnx')} is missing (nor is there an onnx/model.onnx): export the model to ONNX into the folder`,
    );
  const config = readJson(join(folder, 'config.json'));
  const dimensions = config?.hidden_size;
  if (!Number.isInteger(dimensions) || (dimensions as number) < 1)
    throw new ModelFolderError(`${join(folder, 'config.json')} has no hidden_size (the length of the model's vectors)`);
  const positions = Number.isInteger(config?.max_position_embeddings) ? (config?.max_position_embeddings as number) : DEFAULT_MAX_TOKENS;
  const sentenceConfig = optionalJson(join(folder, 'sentence_bert_config.json'));
  const maxTokens = Number.isInteger(sentenceConfig?.max_seq_length) ? Math.min(positions, sentenceConfig?.max_seq_length as number) : positions;
  const tokenizerPath = join(folder, 'tokenizer.json');
  let tokenizer: WordPieceSettings;
  try {
    tokenizer = readWordPiece(readJson(tokenizerPath), maxTokens);
  } catch (error) {
    if (error instanceof TokenizerFormatError) throw new ModelFolderError(`${tokenizerPath} cannot be used: ${error.message}`);
    throw error;
  }
  // sentence-transformers sets the tokenizer's length to max_seq_length, whatever its truncation says.
  if (sentenceConfig?.max_seq_length !== undefined) tokenizer = { ...tokenizer, maxLength: maxTokens };
  return { dir: folder, name: basename(folder), modelPath, tokenizer, dimensions: dimensions as number, pooling: poolingOf(folder) };
}

function poolingOf(folder: string): Pooling {
  const path = join(folder, '1_Pooling', 'config.json');
  const config = optionalJson(path);
  if (!config) return 'mean';
  if (config.pooling_mode_cls_token === true) return 'cls';
  if (config.pooling_mode_mean_tokens === true) return 'mean';
  throw new ModelFolderError(`${path} asks for a pooling other than mean or CLS, which are supported`);
}

function readJson(path: string): Record<string, unknown> | undefined {
  if (!existsSync(path)) throw new ModelFolderError(`${path} is missing`);
  return parsed(path);
}

function optionalJson(path: string): Record<string, unknown> | undefined {
  return existsSync(path) ? parsed(path) : undefined;
}

function parsed(path: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch (error) {
    throw new ModelFolderError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  throw new ModelFolderError(`${path} is not a JSON object`);
}
