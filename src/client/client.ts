import { randomUUID } from 'node:crypto';
import type {
  CreditsResponse,
  DocumentResponse,
  FaceSearchRequest,
  FaceSearchResponse,
  NettestResponse,
  ProfileResponse,
  QueryRequest,
  QueryResponse,
  RootResponse,
  VersionResponse,
} from './api-types.js';
import { MeteredSearchError, MeteredSearchNetworkError } from './errors.js';
import { DEFAULT_RETRY, delayBeforeAttempt, isRetryableStatus, type RetryOptions, sleep } from './retry.js';

export interface ClientOptions {
  /** Where the service listens, such as https://search.example.com. */
  baseUrl: string;
  /** The 64-hex API key. */
  apiKey: string;
  /** Time limit of each attempt, in milliseconds (default 30,000). */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** For tests and custom agents; defaults to the global fetch. */
  fetch?: typeof fetch;
}

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

interface Call {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  billable: boolean;
}

/** A typed client for metered-search, with retries that never charge a call twice. */
export class MeteredSearchClient {
  private readonly baseUrl: string;
  private readonly retry: RetryOptions;
  private readonly fetch: typeof fetch;
  private readonly timeoutMs: number;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.fetch = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  root(options?: CallOptions): Promise<Result<RootResponse>> {
    return this.call({ method: 'GET', path: '/', billable: false }, options);
  }

  version(options?: CallOptions): Promise<Result<VersionResponse>> {
    return this.call({ method: 'GET', path: '/version', billable: false }, options);
  }

  profile(options?: CallOptions): Promise<Result<ProfileResponse>> {
    return this.call({ method: 'GET', path: '/profile', billable: false }, options);
  }

  nettest(options?: CallOptions): Promise<Result<NettestResponse>> {
    return this.call({ method: 'GET', path: '/nettest', billable: false }, options);
  }

  /** The key's balance; free. */
  credits(options?: CallOptions): Promise<Result<CreditsResponse>> {
    return this.call({ method: 'GET', path: '/credits', billable: false }, options);
  }

  /** One document by id (1 credit). */
  document(docId: string, options?: CallOptions): Promise<Result<DocumentResponse>> {
    return this.call({ method: 'GET', path: '/document', headers: { 'svc-doc-id': docId }, billable: true }, options);
  }

  /** Full-text search (1 credit). */
  query(request: QueryRequest, options?: CallOptions): Promise<Result<QueryResponse>> {
    return this.call({ method: 'POST', path: '/query', body: request, billable: true }, options);
  }

  /** Face search (1 credit). */
  faceSearch(request: FaceSearchRequest, options?: CallOptions): Promise<Result<FaceSearchResponse>> {
    return this.call({ method: 'POST', path: '/face/search', body: request, billable: true }, options);
  }

  private async call<Body>(call: Call, options: CallOptions = {}): Promise<Result<Body>> {
    const headers: Record<string, string> = { 'x-api-key': this.options.apiKey, accept: 'application/json', ...call.headers };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (call.billable) headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);

    for (let attempt = 1; ; attempt++) {
      const signals = [AbortSignal.timeout(this.timeoutMs), ...(options.signal ? [options.signal] : [])];
      let response: Response;
      try {
        response = await this.fetch(`${this.baseUrl}${call.path}`, { method: call.method, headers, body, signal: AbortSignal.any(signals) });
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (attempt >= this.retry.maxAttempts) {
          throw new MeteredSearchNetworkError(`${call.method} ${call.path} failed after ${attempt} attempts: ${(error as Error).message}`, attempt, {
            cause: error,
          });
        }
        await sleep(delayBeforeAttempt(attempt, this.retry, null), options.signal);
        continue;
      }

      const replayed = response.headers.get('idempotent-replayed') === 'true';
      if (response.ok) {
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
      if (isRetryableStatus(response.status, replayed) && attempt < this.retry.maxAttempts) {
        await response.body?.cancel();
        await sleep(delayBeforeAttempt(attempt, this.retry, response.headers.get('retry-after')), options.signal);
        continue;
      }
      const envelope = (await response.json().catch(() => ({}))) as Record<string, unknown>;
      const message = typeof envelope.message === 'string' ? envelope.message : `HTTP ${response.status}`;
      throw new MeteredSearchError(response.status, message, envelope, response.headers.get('x-request-id') ?? undefined, attempt);
    }
  }
}
