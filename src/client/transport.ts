import { randomUUID } from 'node:crypto';
import { MeteredSearchError, MeteredSearchNetworkError } from './errors.js';
import { DEFAULT_RETRY, delayBeforeAttempt, isRetryableStatus, type RetryOptions, retryAt, sleep } from './retry.js';

export interface CallOptions {
  /** Cancels the call, including any wait between attempts. */
  signal?: AbortSignal;
  /**
   * For billable calls: the Idempotency-Key sent with every attempt of this call. A fresh one is
   * made per call when absent, so a retried call is charged at most once.
   */
  idempotencyKey?: string;
}

/** What the service said besides the body. */
export interface CallMeta {
  /** Credits left after a billable call (x-credits-remaining). */
  creditsRemaining: number | undefined;
  /** The answer is the stored answer of an earlier attempt of the same call. */
  replayed: boolean;
  requestId: string | undefined;
  attempts: number;
}

export type Result<Body> = Body & { readonly meta: CallMeta };

/** A typed client for metered-search, with retries that never charge a call twice. */

/** Where and how a client calls: the service, its credentials' headers, the time limit and retries. */
export interface Transport {
  baseUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  retry: RetryOptions;
  fetch: typeof fetch;
}

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Sends one Idempotency-Key with every attempt, so a retried call takes effect at most once. */
  idempotent: boolean;
  /** A call that is neither idempotent nor safe to repeat (creating a key) is made once. */
  once?: boolean;
}

export function transportOf(
  options: { baseUrl: string; timeoutMs?: number; retry?: Partial<RetryOptions>; fetch?: typeof fetch },
  headers: Record<string, string>,
): Transport {
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers,
    timeoutMs: options.timeoutMs ?? 30_000,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    fetch: options.fetch ?? fetch,
  };
}

/**
 * One call, with retries: network errors, timeouts, 5xx, 409 and a 429 asking to wait at most a
 * minute are retried with backoff (waiting at least what Retry-After asks); other answers throw
 * MeteredSearchError at once, with when to try again (`retryAt`) when the service said.
 */
export async function send<Body>(transport: Transport, call: Call, options: CallOptions = {}): Promise<Result<Body>> {
  const headers: Record<string, string> = { ...transport.headers, accept: 'application/json', ...call.headers };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  if (call.idempotent) headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
  const body = call.body === undefined ? undefined : JSON.stringify(call.body);
  const maxAttempts = call.once ? 1 : transport.retry.maxAttempts;
  for (let attempt = 1; ; attempt++) {
    const signals = [AbortSignal.timeout(transport.timeoutMs), ...(options.signal ? [options.signal] : [])];
    let response: Response;
    try {
      response = await transport.fetch(`${transport.baseUrl}${call.path}`, { method: call.method, headers, body, signal: AbortSignal.any(signals) });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (attempt >= maxAttempts) {
        throw new MeteredSearchNetworkError(`${call.method} ${call.path} failed after ${attempt} attempts: ${(error as Error).message}`, attempt, {
          cause: error,
        });
      }
      await sleep(delayBeforeAttempt(attempt, transport.retry, null), options.signal);
      continue;
    }
    const replayed = response.headers.get('idempotent-replayed') === 'true';
    if (response.ok) return withMeta<Body>(response, replayed, attempt);
    const retryAfter = response.headers.get('retry-after');
    if (isRetryableStatus(response.status, replayed, retryAfter) && attempt < maxAttempts) {
      await response.body?.cancel();
      await sleep(delayBeforeAttempt(attempt, transport.retry, retryAfter), options.signal);
      continue;
    }
    const envelope = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    const message = typeof envelope.message === 'string' ? envelope.message : `HTTP ${response.status}`;
    throw new MeteredSearchError(response.status, message, envelope, response.headers.get('x-request-id') ?? undefined, attempt, retryAt(retryAfter));
  }
}

async function withMeta<Body>(response: Response, replayed: boolean, attempt: number): Promise<Result<Body>> {
  const parsed = (await response.json()) as Body;
  const remaining = response.headers.get('x-credits-remaining');
  const meta: CallMeta = {
    creditsRemaining: remaining === null ? undefined : Number(remaining),
    replayed,
    requestId: response.headers.get('x-request-id') ?? undefined,
    attempts: attempt,
  };
  // Not enumerable: the body stays what the service sent, for JSON.stringify and deepEqual alike.
  return Object.defineProperty(parsed as object, 'meta', { value: meta, enumerable: false }) as Result<Body>;
}
