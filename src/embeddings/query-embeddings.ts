import type { Embedder } from './embedder.js';

const CACHED_QUERIES = 2000;

/** Query texts' vectors, the CACHED_QUERIES most recently asked kept: a repeated prompt costs no call. */
export class QueryEmbeddings {
  private readonly cache = new Map<string, Float32Array>();

  constructor(readonly embedder: Embedder) {}

  async vectorOf(text: string): Promise<Float32Array> {
    const cached = this.cache.get(text);
    if (cached) {
      this.cache.delete(text);
      this.cache.set(text, cached);
      return cached;
    }
    const [vector] = await this.embedder.embed([text]);
    this.cache.set(text, vector);
    if (this.cache.size > CACHED_QUERIES) this.cache.delete(this.cache.keys().next().value as string);
    return vector;
  }
}
