import { endianness } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Embedder, EmbedderError, type EndpointEmbeddingsConfig, unusableVector } from './embedder.js';

/** The first retry's wait; each next one doubles it, unless the endpoint says how long (Retry-After). */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5000;
const LITTLE_ENDIAN = endianness() === 'LE';

interface EmbeddingsResponse {
  data?: Array<{ index?: number; embedding?: unknown }>;
}

/**
 * An endpoint speaking OpenAI's embeddings API (POST /v1/embeddings: {model, input: [...]}
 * answered by {data: [{index, embedding}]}), as OpenAI, Azure, Ollama, vLLM, TEI, LM Studio and
 * llama.cpp's server do. Texts go in batches; 429, 5xx, timeouts and refused connections are
 * retried with backoff; a vector of the wrong length is refused.
 *
 * Vectors are asked for as base64, as the openai client does: under half the bytes of a list of
 * numbers, copied rather than parsed (bench:ingest-cli: twice the documents per second at 384
 * dimensions). An endpoint that ignores `encoding_format` answers lists, which are read as well;
 * one that refuses it (400 or 422) is asked again for lists, and from then on only for lists.
 */
export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  private encoding: 'base64' | 'float' = 'base64';

  constructor(
    private readonly config: EndpointEmbeddingsConfig,
    private readonly wait: (ms: number) => Promise<unknown> = sleep,
  ) {
    this.model = config.model;
    this.dimensions = config.dimensions;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.config.batchSize) {
      try {
        vectors.push(...(await this.embedBatch(texts.slice(start, start + this.config.batchSize))));
      } catch (error) {
        if (error instanceof EmbedderError && error.textIndex !== undefined) throw new EmbedderError(error.message, start + error.textIndex);
        throw error;
      }
    }
    return vectors;
  }

  private async embedBatch(input: string[]): Promise<Float32Array[]> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.request(input);
      if (!('retryAfterMs' in outcome)) return outcome.vectors;
      if (attempt >= this.config.retries) throw new EmbedderError(`${outcome.reason} (after ${attempt + 1} attempt${attempt === 0 ? '' : 's'})`);
      await this.wait(outcome.retryAfterMs ?? Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** attempt));
    }
  }

  /** One request: its vectors, or why it may be retried (and when, if the endpoint said). */
  private async request(input: string[]): Promise<{ vectors: Float32Array[] } | { reason: string; retryAfterMs: number | undefined }> {
    const where = `the embeddings endpoint ${this.config.url}`;
    // As sent: requests in flight together were all sent for base64, and each refusal is asked again.
    const encoding = this.encoding;
    let response: Response;
    try {
      response = await fetch(this.config.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: this.model, input, encoding_format: encoding }),
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      const reason = timedOut ? `did not answer within ${this.config.timeoutMs} ms` : `is unreachable (${causeOf(error)})`;
      return { reason: `${where} ${reason}`, retryAfterMs: undefined };
    }
    if (response.status === 429 || response.status >= 500) {
      await response.body?.cancel();
      return { reason: `${where} answered ${response.status}`, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) };
    }
    if ((response.status === 400 || response.status === 422) && encoding === 'base64') {
      await response.body?.cancel();
      this.encoding = 'float';
      return this.request(input);
    }
    if (!response.ok) {
      const detail = (await response.text().catch(() => '')).slice(0, 200);
      throw new EmbedderError(`${where} refused the request with ${response.status}${detail ? `: ${detail}` : ''}`);
    }
    return { vectors: this.vectorsOf((await response.json().catch(() => ({}))) as EmbeddingsResponse, input.length, where) };
  }

  private vectorsOf(body: EmbeddingsResponse, count: number, where: string): Float32Array[] {
    const data = Array.isArray(body.data) ? body.data : [];
    if (data.length !== count) throw new EmbedderError(`${where} answered ${data.length} embeddings for ${count} texts`);
    const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map((entry, index) => {
      const vector = typeof entry.embedding === 'string' ? float32sOfBase64(entry.embedding) : numbersOf(entry.embedding);
      if (!vector) throw new EmbedderError(`${where} answered an embedding that is neither a list of numbers nor base64 of float32s`, index);
      if (vector.length !== this.dimensions) {
        throw new EmbedderError(
          `${where} answered vectors of ${vector.length} dimensions for model ${this.model}; EMBEDDINGS_DIMENSIONS is ${this.dimensions}`,
          index,
        );
      }
      const unusable = unusableVector(vector);
      if (unusable) throw new EmbedderError(`${where} answered a vector that ${unusable} for model ${this.model}`, index);
      return vector;
    });
  }
}

function numbersOf(values: unknown): Float32Array | undefined {
  if (!Array.isArray(values) || values.some((value) => typeof value !== 'number')) return undefined;
  return Float32Array.from(values);
}

/** OpenAI's base64 encoding: the vector's float32s, little-endian (copied as they are on a little-endian machine). */
function float32sOfBase64(encoded: string): Float32Array | undefined {
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length % 4 !== 0 || bytes.length === 0) return undefined;
  const vector = new Float32Array(bytes.length / 4);
  if (LITTLE_ENDIAN) new Uint8Array(vector.buffer).set(bytes);
  else for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/** Retry-After in seconds or as a date, as milliseconds to wait (at most MAX_BACKOFF_MS); undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) ? Math.min(MAX_BACKOFF_MS, Math.max(0, ms)) : undefined;
}
