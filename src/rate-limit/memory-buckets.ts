import { type BucketDecision, decide, type TokenBuckets } from './buckets.js';

const MAX_BUCKETS = 100_000;

/** Buckets in this process: the limit holds per instance. */
export class MemoryBuckets implements TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  async take(bucket: string, perSecond: number, capacity: number): Promise<BucketDecision> {
    const now = this.now();
    const state = this.buckets.get(bucket);
    let tokens = state ? Math.min(capacity, state.tokens + ((now - state.at) * perSecond) / 1000) : capacity;
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    if (!state && this.buckets.size >= MAX_BUCKETS) this.dropFullBuckets(now, perSecond, capacity);
    this.buckets.set(bucket, { tokens, at: now });
    return decide(allowed, tokens, perSecond, capacity);
  }

  /** A bucket that has refilled is the same as no bucket: forgetting it changes nothing. */
  private dropFullBuckets(now: number, perSecond: number, capacity: number): void {
    for (const [bucket, state] of this.buckets) {
      if (state.tokens + ((now - state.at) * perSecond) / 1000 >= capacity) this.buckets.delete(bucket);
    }
  }

  async close(): Promise<void> {}
}
