/** A token bucket's answer to one request. */
export interface BucketDecision {
  allowed: boolean;
  /** Whole requests left in the bucket after this one. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** When refused: seconds until one request's worth has refilled (at least 1). */
  retryAfterSeconds: number;
}

/** Where the buckets live: this process, or Redis for a limit shared by every instance. */
export interface TokenBuckets {
  /** Takes one token from `bucket`, which holds at most `capacity` and refills at `perSecond`. */
  take(bucket: string, perSecond: number, capacity: number): Promise<BucketDecision>;
  close(): Promise<void>;
}

/** The decision, from the tokens left once this request took its one (or could not). */
export function decide(allowed: boolean, tokens: number, perSecond: number, capacity: number): BucketDecision {
  return {
    allowed,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((capacity - tokens) / perSecond),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
  };
}
