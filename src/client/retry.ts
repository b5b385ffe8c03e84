export interface RetryOptions {
  /** Attempts in all, the first included (default 4). */
  maxAttempts: number;
  /** Backoff base: attempt n waits a random time up to baseDelayMs * 2^(n-1) (default 200). */
  baseDelayMs: number;
  /** No wait is longer than this, Retry-After included (default 10,000). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 10_000 };

/**
 * Answers worth another attempt: 5xx (unless it is a stored answer being replayed, which a retry
 * would only replay again), 429 (over the rate limit) and 409 (the same idempotent call still
 * running on the server, as after a lost response).
 */
export function isRetryableStatus(status: number, replayed: boolean): boolean {
  if (replayed) return false;
  return status >= 500 || status === 429 || status === 409;
}

/** Exponential backoff with full jitter; at least what Retry-After asks, within maxDelayMs. */
export function delayBeforeAttempt(attempt: number, options: RetryOptions, retryAfter: string | null, random = Math.random): number {
  const backoff = random() * Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  const asked = retryAfter === null ? NaN : retryAfterMs(retryAfter);
  return Math.min(options.maxDelayMs, Number.isNaN(asked) ? backoff : Math.max(asked, backoff));
}

/** Retry-After is seconds or an HTTP date. */
function retryAfterMs(value: string): number {
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? NaN : Math.max(0, date - Date.now());
}

export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
