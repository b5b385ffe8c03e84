import type {
  AdminAuditLogResponse,
  AdminCreateKeyRequest,
  AdminCreateKeyResponse,
  AdminDeleteDocumentResponse,
  AdminGetKeyResponse,
  AdminIngestDocumentsResponse,
  AdminKeyStatusResponse,
  AdminKeyUsageResponse,
  AdminListKeysResponse,
  AdminRollKeyResponse,
  AdminSetKeyRateResponse,
  AdminTopUpKeyRequest,
  AdminTopUpKeyResponse,
  AdminUsageResponse,
} from './api-types.js';
import type { CallOptions, Result } from './client.js';
import type { RetryOptions } from './retry.js';
import { send, type Transport, transportOf } from './transport.js';

export interface AdminClientOptions {
  /** Where the admin API listens: the service, or its ADMIN_PORT listener. */
  baseUrl: string;
  /** A token from `metered-search admin tokens create`. */
  token: string;
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  fetch?: typeof fetch;
}

export interface KeyListQuery {
  limit?: number;
  cursor?: string;
  status?: 'active' | 'disabled' | 'revoked';
  name?: string;
}

export interface UsageSpanQuery {
  from?: string;
  to?: string;
  bucket?: 'hour' | 'day';
}

function query(values: Record<string, string | number | undefined>): string {
  const entries = Object.entries(values).filter((entry): entry is [string, string | number] => entry[1] !== undefined);
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries.map(([name, value]) => [name, String(value)]))}`;
}

const key = (id: string) => `/admin/keys/${encodeURIComponent(id)}`;

/**
 * A typed client for the admin API. Reads and state changes are retried like the public client's
 * calls; a top-up sends one Idempotency-Key with every attempt, so it grants at most once; creating
 * a key is tried once, since a repeat would create a second key.
 */
export class MeteredSearchAdmin {
  private readonly transport: Transport;

  constructor(options: AdminClientOptions) {
    this.transport = transportOf(options, { authorization: `Bearer ${options.token}` });
  }

  createKey(request: AdminCreateKeyRequest, options?: CallOptions): Promise<Result<AdminCreateKeyResponse>> {
    return send(this.transport, { method: 'POST', path: '/admin/keys', body: request, idempotent: false, once: true }, options);
  }

  listKeys(filter: KeyListQuery = {}, options?: CallOptions): Promise<Result<AdminListKeysResponse>> {
    return send(this.transport, { method: 'GET', path: `/admin/keys${query({ ...filter })}`, idempotent: false }, options);
  }

  getKey(id: string, options?: CallOptions): Promise<Result<AdminGetKeyResponse>> {
    return send(this.transport, { method: 'GET', path: key(id), idempotent: false }, options);
  }

  topUp(id: string, request: AdminTopUpKeyRequest, options?: CallOptions): Promise<Result<AdminTopUpKeyResponse>> {
    return send(this.transport, { method: 'POST', path: `${key(id)}/topup`, body: request, idempotent: true }, options);
  }

  setStatus(id: string, action: 'disable' | 'enable' | 'revoke', options?: CallOptions): Promise<Result<AdminKeyStatusResponse>> {
    return send(this.transport, { method: 'POST', path: `${key(id)}/${action}`, idempotent: false }, options);
  }

  setRate(id: string, rate: number | null, options?: CallOptions): Promise<Result<AdminSetKeyRateResponse>> {
    return send(this.transport, { method: 'PUT', path: `${key(id)}/rate`, body: { rate }, idempotent: false }, options);
  }

  /** Not retried: each attempt makes a new key (a lost answer's key is then a former key, valid for its grace period). */
  roll(id: string, graceSeconds: number, options?: CallOptions): Promise<Result<AdminRollKeyResponse>> {
    return send(this.transport, { method: 'POST', path: `${key(id)}/roll`, body: { grace_seconds: graceSeconds }, idempotent: false }, options);
  }

  keyUsage(id: string, span: UsageSpanQuery = {}, options?: CallOptions): Promise<Result<AdminKeyUsageResponse>> {
    return send(this.transport, { method: 'GET', path: `${key(id)}/usage${query({ ...span })}`, idempotent: false }, options);
  }

  usage(span: UsageSpanQuery = {}, options?: CallOptions): Promise<Result<AdminUsageResponse>> {
    return send(this.transport, { method: 'GET', path: `/admin/usage${query({ ...span })}`, idempotent: false }, options);
  }

  auditLog(page: { limit?: number; cursor?: string } = {}, options?: CallOptions): Promise<Result<AdminAuditLogResponse>> {
    return send(this.transport, { method: 'GET', path: `/admin/audit-log${query(page)}`, idempotent: false }, options);
  }

  /** Every document or none; a bad record is named in the MeteredSearchError's message. */
  ingestDocuments(documents: Array<Record<string, unknown>>, options?: CallOptions): Promise<Result<AdminIngestDocumentsResponse>> {
    return send(this.transport, { method: 'POST', path: '/admin/documents', body: documents, idempotent: false }, options);
  }

  deleteDocument(docId: string, options?: CallOptions): Promise<Result<AdminDeleteDocumentResponse>> {
    return send(this.transport, { method: 'DELETE', path: `/admin/documents/${encodeURIComponent(docId)}`, idempotent: false }, options);
  }
}
