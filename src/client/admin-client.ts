import type {
  AdminAccountEventsResponse,
  AdminAccountUsageResponse,
  AdminAuditLogResponse,
  AdminCreateAccountKeyRequest,
  AdminCreateAccountKeyResponse,
  AdminCreateAccountRequest,
  AdminCreateAccountResponse,
  AdminCreateKeyRequest,
  AdminCreateKeyResponse,
  AdminCreateWebhookRequest,
  AdminCreateWebhookResponse,
  AdminDeleteDocumentResponse,
  AdminDeleteWebhookResponse,
  AdminGetAccountResponse,
  AdminGetKeyResponse,
  AdminIngestDocumentsResponse,
  AdminKeyStatusResponse,
  AdminKeyUsageResponse,
  AdminListAccountsResponse,
  AdminListKeysResponse,
  AdminListWebhookDeliveriesResponse,
  AdminListWebhooksResponse,
  AdminRetryWebhookDeliveryResponse,
  AdminRollKeyResponse,
  AdminSearchRequest,
  AdminSearchResponse,
  AdminSetAccountRefillRequest,
  AdminSetAccountRefillResponse,
  AdminSetKeyRateResponse,
  AdminSetRefillRequest,
  AdminSetRefillResponse,
  AdminTopUpAccountRequest,
  AdminTopUpAccountResponse,
  AdminTopUpKeyRequest,
  AdminTopUpKeyResponse,
  AdminUpdateAccountRequest,
  AdminUpdateAccountResponse,
  AdminUpdateKeyRequest,
  AdminUpdateKeyResponse,
  AdminUsageResponse,
} from './api-types.js';
import type { RetryOptions } from './retry.js';
import type { CallOptions, Result } from './transport.js';
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

export interface AccountListQuery {
  limit?: number;
  cursor?: string;
  external_id?: string;
  name_contains?: string;
}

const key = (id: string) => `/admin/keys/${encodeURIComponent(id)}`;
const account = (id: string) => `/admin/accounts/${encodeURIComponent(id)}`;

/**
 * A typed client for the admin API. Reads and state changes are retried like the public client's
 * calls; a top-up, a refill plan and a roll send one Idempotency-Key with every attempt, so each
 * happens at most once; creating an account or a key is tried once, since a repeat would create a second.
 */
export class MeteredSearchAdmin {
  private readonly transport: Transport;

  constructor(options: AdminClientOptions) {
    this.transport = transportOf(options, { authorization: `Bearer ${options.token}` });
  }

  createAccount(request: AdminCreateAccountRequest, options?: CallOptions): Promise<Result<AdminCreateAccountResponse>> {
    return send(this.transport, { method: 'POST', path: '/admin/accounts', body: request, idempotent: false, once: true }, options);
  }

  listAccounts(filter: AccountListQuery = {}, options?: CallOptions): Promise<Result<AdminListAccountsResponse>> {
    return send(this.transport, { method: 'GET', path: `/admin/accounts${query({ ...filter })}`, idempotent: false }, options);
  }

  getAccount(id: string, options?: CallOptions): Promise<Result<AdminGetAccountResponse>> {
    return send(this.transport, { method: 'GET', path: account(id), idempotent: false }, options);
  }

  updateAccount(id: string, request: AdminUpdateAccountRequest, options?: CallOptions): Promise<Result<AdminUpdateAccountResponse>> {
    return send(this.transport, { method: 'PATCH', path: account(id), body: request, idempotent: false }, options);
  }

  /** A key of the account; tried once, since a repeat would create a second key. */
  createAccountKey(id: string, request: AdminCreateAccountKeyRequest = {}, options?: CallOptions): Promise<Result<AdminCreateAccountKeyResponse>> {
    return send(this.transport, { method: 'POST', path: `${account(id)}/keys`, body: request, idempotent: false, once: true }, options);
  }

  topUpAccount(id: string, request: AdminTopUpAccountRequest, options?: CallOptions): Promise<Result<AdminTopUpAccountResponse>> {
    return send(this.transport, { method: 'POST', path: `${account(id)}/topup`, body: request, idempotent: true }, options);
  }

  /** Sets an account's refill plan; null ends it. One Idempotency-Key with every attempt. */
  setAccountRefill(id: string, plan: AdminSetAccountRefillRequest | null, options?: CallOptions): Promise<Result<AdminSetAccountRefillResponse>> {
    const path = `${account(id)}/refill`;
    return send(this.transport, plan ? { method: 'PUT', path, body: plan, idempotent: true } : { method: 'DELETE', path, idempotent: true }, options);
  }

  accountEvents(id: string, limit?: number, options?: CallOptions): Promise<Result<AdminAccountEventsResponse>> {
    return send(this.transport, { method: 'GET', path: `${account(id)}/events${query({ limit })}`, idempotent: false }, options);
  }

  accountUsage(id: string, span: UsageSpanQuery = {}, options?: CallOptions): Promise<Result<AdminAccountUsageResponse>> {
    return send(this.transport, { method: 'GET', path: `${account(id)}/usage${query({ ...span })}`, idempotent: false }, options);
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

  /** One Idempotency-Key with every attempt: a retry gets the first answer's new key, and rolls nothing more. */
  roll(id: string, graceSeconds: number, options?: CallOptions): Promise<Result<AdminRollKeyResponse>> {
    return send(this.transport, { method: 'POST', path: `${key(id)}/roll`, body: { grace_seconds: graceSeconds }, idempotent: true }, options);
  }

  /** A key's end, metadata or caps, or its account's prices or low-balance mark. */
  updateKey(id: string, request: AdminUpdateKeyRequest, options?: CallOptions): Promise<Result<AdminUpdateKeyResponse>> {
    return send(this.transport, { method: 'PATCH', path: key(id), body: request, idempotent: false }, options);
  }

  /** Sets a refill plan; null ends it. One Idempotency-Key with every attempt: a retry is answered from the first. */
  setRefill(id: string, plan: AdminSetRefillRequest | null, options?: CallOptions): Promise<Result<AdminSetRefillResponse>> {
    const path = `${key(id)}/refill`;
    return send(this.transport, plan ? { method: 'PUT', path, body: plan, idempotent: true } : { method: 'DELETE', path, idempotent: true }, options);
  }

  /** Tried once: a repeat would add a second endpoint with a second secret. */
  createWebhook(request: AdminCreateWebhookRequest, options?: CallOptions): Promise<Result<AdminCreateWebhookResponse>> {
    return send(this.transport, { method: 'POST', path: '/admin/webhooks', body: request, idempotent: false, once: true }, options);
  }

  listWebhooks(options?: CallOptions): Promise<Result<AdminListWebhooksResponse>> {
    return send(this.transport, { method: 'GET', path: '/admin/webhooks', idempotent: false }, options);
  }

  deleteWebhook(id: string, options?: CallOptions): Promise<Result<AdminDeleteWebhookResponse>> {
    return send(this.transport, { method: 'DELETE', path: `/admin/webhooks/${encodeURIComponent(id)}`, idempotent: false }, options);
  }

  webhookDeliveries(page: { limit?: number; cursor?: string } = {}, options?: CallOptions): Promise<Result<AdminListWebhookDeliveriesResponse>> {
    return send(this.transport, { method: 'GET', path: `/admin/webhooks/deliveries${query({ ...page })}`, idempotent: false }, options);
  }

  retryWebhookDelivery(id: string, options?: CallOptions): Promise<Result<AdminRetryWebhookDeliveryResponse>> {
    const path = `/admin/webhooks/deliveries/${encodeURIComponent(id)}/retry`;
    return send(this.transport, { method: 'POST', path, idempotent: false }, options);
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

  /** The corpus searched as POST /query searches it, free: the same body, /query's resp.body as the answer. */
  search(body: AdminSearchRequest, options?: CallOptions): Promise<Result<AdminSearchResponse>> {
    return send(this.transport, { method: 'POST', path: '/admin/search', body, idempotent: false }, options);
  }

  deleteDocument(docId: string, options?: CallOptions): Promise<Result<AdminDeleteDocumentResponse>> {
    return send(this.transport, { method: 'DELETE', path: `/admin/documents/${encodeURIComponent(docId)}`, idempotent: false }, options);
  }
}
