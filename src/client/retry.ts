export interface RetryOptions {
  /** Attempts in all, the first included (default 4). */
  maxAttempts: number;
  /** Backoff base: attempt n waits a random time up to baseDelayMs * 2^(n-1) (default 200). */
  baseDelayMs: number;
  /** No wait is longer than this, Retry-After included (default 10,000). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 10_000 };

/** A 429 is waited for only when it asks for at most this: a spend cap's 429 asks for hours. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Answers worth another attempt: 5xx (unless it is a stored answer being replayed, which a retry
 * would only replay again), 429 whose Retry-After is short (over the rate limit, not a spend cap
 * until its period ends) and 409 (the same idempotent call still running on the server, as after
 * a lost response).
 */
export function isRetryableStatus(status: number, replayed: boolean, retryAfter: string | null = null): boolean {
  if (replayed) return false;
  if (status === 429) return retryAfter === null || !(retryAfterMs(retryAfter) > MAX_RETRY_AFTER_MS);
  return status >= 500 || status === 409;
}

/** When Retry-After says to try again, or undefined when it is absent or unreadable. */
export function retryAt(retryAfter: string | null, now = Date.now()): Date | undefined {
  const ms = retryAfter === null ? NaN : retryAfterMs(retryAfter);
  return Number.isNaN(ms) ? undefined : new Date(now + ms);
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
