import type { KeyRecord } from '../billing/ledger.js';
import type { BucketDecision, TokenBuckets } from './buckets.js';

export interface RateLimitSettings {
  /** Requests per second for a key without its own limit; 0 turns the default limit off. */
  defaultPerSecond: number;
}

export type RateLimitDecision = { limited: false } | ({ limited: true; perSecond: number; capacity: number } & BucketDecision);

/**
 * Per-key token buckets: a key may make `perSecond` requests per second, in bursts of up to one
 * second's worth. Advertised as the IETF RateLimit-Policy "per-key";q=<capacity>;w=1.
 */
export class RateLimitService {
  private lastFailureLog = 0;

  constructor(
    private readonly buckets: TokenBuckets,
    private readonly settings: RateLimitSettings,
    private readonly onBucketFailure: (error: unknown) => void = () => undefined,
  ) {}

  perSecondFor(key: KeyRecord): number {
    return key.rateLimit ?? this.settings.defaultPerSecond;
  }

  /** Takes a request's token. If the buckets cannot be reached, the request goes through: availability before strictness. */
  async take(keyId: string, key: KeyRecord): Promise<RateLimitDecision> {
    const perSecond = this.perSecondFor(key);
    if (perSecond <= 0) return { limited: false };
    const capacity = Math.max(1, Math.ceil(perSecond));
    try {
      return { limited: true, perSecond, capacity, ...(await this.buckets.take(keyId, perSecond, capacity)) };
    } catch (error) {
      if (Date.now() - this.lastFailureLog > 10_000) {
        this.lastFailureLog = Date.now();
        this.onBucketFailure(error);
      }
      return { limited: false };
    }
  }

  close(): Promise<void> {
    return this.buckets.close();
  }
}
