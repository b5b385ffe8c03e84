import { createHash } from 'node:crypto';
import type { EmbeddingsConfig, EndpointEmbeddingsConfig, LocalModelConfig } from '../config.js';

export type { EmbeddingsConfig, EndpointEmbeddingsConfig, LocalModelConfig };

/**
 * A model that turns texts into vectors of `dimensions` numbers, close together for texts of like
 * meaning: the operator's endpoint (openai-embedder.ts), or a model run in process
 * (local/local-embedder.ts).
 */
export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** One vector per text, in their order; rejects with an EmbedderError saying what went wrong. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /** For a model loaded at start: resolves once it is, rejects saying which file could not be. */
  readonly ready?: Promise<void>;
}

/**
 * The embedder could not answer, or answered what cannot be used; `message` names the endpoint.
 * `textIndex`: the text (of those given to `embed`) whose vector was unusable, when one was.
 */
export class EmbedderError extends Error {
  constructor(
    message: string,
    readonly textIndex?: number,
  ) {
    super(message);
  }
}

/**
 * Why a model's vector cannot be used, or undefined: a value that is not finite as a float32
 * (NaN, 1e400), or no length at all (all zeros), which no cosine can rank.
 */
export function unusableVector(vector: Float32Array): string | undefined {
  let squares = 0;
  for (const value of vector) {
    if (!Number.isFinite(value)) return 'holds a value that is not a finite number';
    squares += value * value;
  }
  if (!(squares > 0) || !Number.isFinite(squares)) return squares > 0 ? 'is too long to normalise' : 'is all zeros';
  return undefined;
}

/** What a document's vector is made from: its title and text, cut to `maxChars`. */
export function textToEmbed(document: { title: string; text: string }, maxChars: number): string {
  const joined = document.title === '' ? document.text : document.text === '' ? document.title : `${document.title}\n\n${document.text}`;
  return joined.slice(0, maxChars);
}

/**
 * The key a stored vector is found by: the model, its dimensions and the text embedded. The same
 * text re-ingested finds its vector and costs no call; another model finds none, and re-embeds.
 */
export function embeddingKey(embedder: Pick<Embedder, 'model' | 'dimensions'>, text: string): string {
  return createHash('sha256').update(`${embedder.model}\n${embedder.dimensions}\n${text}`).digest('hex').slice(0, 32);
}
