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
  UsageResponse,
  VersionResponse,
} from './api-types.js';
import type { RetryOptions } from './retry.js';
import { type CallOptions, type Result, send, type Transport, transportOf } from './transport.js';

export type { CallMeta, CallOptions, Result } from './transport.js';

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

export class MeteredSearchClient {
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = transportOf(options, { 'x-api-key': options.apiKey });
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

  /** The key's own charges by day and endpoint over the last 30 days (free). */
  usage(options?: CallOptions): Promise<Result<UsageResponse>> {
    return this.call({ method: 'GET', path: '/usage', billable: false }, options);
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

  private call<Body>(
    call: { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: unknown; billable: boolean },
    options: CallOptions = {},
  ): Promise<Result<Body>> {
    return send<Body>(this.transport, { ...call, idempotent: call.billable }, options);
  }
}
