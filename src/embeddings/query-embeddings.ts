import { CircuitBreaker } from '../platform/circuit-breaker.js';
import type { Embedder } from './embedder.js';

const CACHED_QUERIES = 2000;

/** How calls to the model are held back: how many at once, and the breaker after repeated failures. */
export interface QueryEmbeddingLimits {
  /** Characters of a prompt embedded; the rest is not, as for documents (EMBEDDINGS_MAX_CHARS). */
  maxChars: number;
  /** Prompts being embedded at once (EMBEDDINGS_CONCURRENCY); past it a prompt is not sent. */
  concurrency: number;
  breakerFailures: number;
  breakerCooldownMs: number;
}

/** A prompt's vector, or why there is none: the model failed, too many prompts are in flight, or the breaker is open. */
export type PromptVector =
  | { outcome: 'embedded'; vector: Float32Array }
  | { outcome: 'failed'; error: Error }
  | { outcome: 'busy' }
  | { outcome: 'breaker-open' };

/**
 * Query texts' vectors, the CACHED_QUERIES most recently asked kept: a repeated prompt costs no
 * call. Calls in flight are bounded and a breaker stops them while the model keeps failing, so
 * that a slow or dead model holds no more than `concurrency` requests.
 */
export class QueryEmbeddings {
  private readonly cache = new Map<string, Float32Array>();
  private readonly breaker: CircuitBreaker;
  private inFlight = 0;

  constructor(
    readonly embedder: Embedder,
    private readonly limits: QueryEmbeddingLimits,
  ) {
    this.breaker = new CircuitBreaker(limits.breakerFailures, limits.breakerCooldownMs);
  }

  async vectorOf(prompt: string): Promise<PromptVector> {
    const text = prompt.slice(0, this.limits.maxChars);
    const cached = this.cache.get(text);
    if (cached) {
      this.cache.delete(text);
      this.cache.set(text, cached);
      return { outcome: 'embedded', vector: cached };
    }
    if (this.inFlight >= this.limits.concurrency) return { outcome: 'busy' };
    if (!this.breaker.tryAcquire()) return { outcome: 'breaker-open' };
    this.inFlight++;
    try {
      const [vector] = await this.embedder.embed([text]);
      this.breaker.recordSuccess();
      this.cache.set(text, vector);
      if (this.cache.size > CACHED_QUERIES) this.cache.delete(this.cache.keys().next().value as string);
      return { outcome: 'embedded', vector };
    } catch (error) {
      this.breaker.recordFailure();
      return { outcome: 'failed', error: error as Error };
    } finally {
      this.inFlight--;
    }
  }
}
