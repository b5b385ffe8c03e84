import type {
  AdminAccountUsageResponse,
  AdminAuditLogResponse,
  AdminCountDocumentsResponse,
  AdminCreateAccountKeyRequest,
  AdminCreateAccountKeyResponse,
  AdminCreateAccountRequest,
  AdminCreateAccountResponse,
  AdminCreateKeyRequest,
  AdminCreateKeyResponse,
  AdminCurrentTokenResponse,
  AdminGetAccountResponse,
  AdminGetKeyResponse,
  AdminGetSynonymsResponse,
  AdminIngestDocumentsResponse,
  AdminKeyChargesResponse,
  AdminKeyEventsResponse,
  AdminKeyStatusResponse,
  AdminKeyUsageResponse,
  AdminListAccountsResponse,
  AdminListKeysResponse,
  AdminPutSynonymsRequest,
  AdminPutSynonymsResponse,
  AdminRollKeyResponse,
  AdminSearchRequest,
  AdminSearchResponse,
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
} from '../../src/client/api-types.js';
import { ServiceFailure, send } from '../../web/src/request.js';

export type {
  AdminAccountUsageResponse,
  AdminAuditLogResponse,
  AdminGetAccountResponse,
  AdminGetKeyResponse,
  AdminGetSynonymsResponse,
  AdminKeyChargesResponse,
  AdminKeyEventsResponse,
  AdminKeyUsageResponse,
  AdminListAccountsResponse,
  AdminListKeysResponse,
  AdminSearchResponse,
  AdminUsageResponse,
};
export type KeySummary = AdminListKeysResponse['keys'][number];
export type AccountSummary = AdminListAccountsResponse['accounts'][number];

type Query = Record<string, string | undefined>;

function pathWith(path: string, query: Query = {}): string {
  const params = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

const id = (value: string) => encodeURIComponent(value);

/** The admin API, called with one token. Every method resolves to the answer's body or throws a ServiceFailure. */
export class AdminApi {
  constructor(
    private readonly token: string,
    private readonly onSignedOut: (message: string) => void = () => undefined,
  ) {}

  private async call<T>(
    method: string,
    path: string,
    body?: { json: unknown } | { text: string; type: string },
    extraHeaders: Record<string, string> = {},
  ): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, ...extraHeaders };
    let payload: string | undefined;
    if (body && 'json' in body) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body.json);
    } else if (body) {
      headers['content-type'] = body.type;
      payload = body.text;
    }
    try {
      return await send<T>(path, { method, headers, body: payload }, 'The service did not answer: check that it is running and reachable.');
    } catch (failure) {
      if (failure instanceof ServiceFailure && failure.status === 401) this.onSignedOut(failure.message);
      throw failure;
    }
  }

  currentToken = () => this.call<AdminCurrentTokenResponse>('GET', '/admin/token');
  usage = (query: Query) => this.call<AdminUsageResponse>('GET', pathWith('/admin/usage', query));
  metrics = () => this.call<string>('GET', '/metrics');
  listAccounts = (query: Query) => this.call<AdminListAccountsResponse>('GET', pathWith('/admin/accounts', query));
  createAccount = (input: AdminCreateAccountRequest) => this.call<AdminCreateAccountResponse>('POST', '/admin/accounts', { json: input });
  getAccount = (accountId: string) => this.call<AdminGetAccountResponse>('GET', `/admin/accounts/${id(accountId)}`);
  updateAccount = (accountId: string, input: AdminUpdateAccountRequest) =>
    this.call<AdminUpdateAccountResponse>('PATCH', `/admin/accounts/${id(accountId)}`, { json: input });
  /** The same idempotencyKey on a retry grants nothing more. */
  topUpAccount = (accountId: string, input: AdminTopUpAccountRequest, idempotencyKey: string) =>
    this.call<AdminTopUpAccountResponse>('POST', `/admin/accounts/${id(accountId)}/topup`, { json: input }, { 'idempotency-key': idempotencyKey });
  createAccountKey = (accountId: string, input: AdminCreateAccountKeyRequest) =>
    this.call<AdminCreateAccountKeyResponse>('POST', `/admin/accounts/${id(accountId)}/keys`, { json: input });
  accountUsage = (accountId: string, query: Query) =>
    this.call<AdminAccountUsageResponse>('GET', pathWith(`/admin/accounts/${id(accountId)}/usage`, query));
  listKeys = (query: Query) => this.call<AdminListKeysResponse>('GET', pathWith('/admin/keys', query));
  createKey = (input: AdminCreateKeyRequest) => this.call<AdminCreateKeyResponse>('POST', '/admin/keys', { json: input });
  getKey = (keyId: string) => this.call<AdminGetKeyResponse>('GET', `/admin/keys/${id(keyId)}`);
  keyUsage = (keyId: string, query: Query) => this.call<AdminKeyUsageResponse>('GET', pathWith(`/admin/keys/${id(keyId)}/usage`, query));
  keyCharges = (keyId: string, query: Query) => this.call<AdminKeyChargesResponse>('GET', pathWith(`/admin/keys/${id(keyId)}/charges`, query));
  keyEvents = (keyId: string) => this.call<AdminKeyEventsResponse>('GET', pathWith(`/admin/keys/${id(keyId)}/events`, { limit: '20' }));
  /** The same idempotencyKey on a retry grants nothing more. */
  topUp = (keyId: string, input: AdminTopUpKeyRequest, idempotencyKey: string) =>
    this.call<AdminTopUpKeyResponse>('POST', `/admin/keys/${id(keyId)}/topup`, { json: input }, { 'idempotency-key': idempotencyKey });
  changeStatus = (keyId: string, action: 'disable' | 'enable' | 'revoke') =>
    this.call<AdminKeyStatusResponse>('POST', `/admin/keys/${id(keyId)}/${action}`, { json: {} });
  roll = (keyId: string, graceSeconds: number) =>
    this.call<AdminRollKeyResponse>('POST', `/admin/keys/${id(keyId)}/roll`, { json: { grace_seconds: graceSeconds } });
  setRefill = (keyId: string, input: AdminSetRefillRequest) =>
    this.call<AdminSetRefillResponse>('PUT', `/admin/keys/${id(keyId)}/refill`, { json: input });
  endRefill = (keyId: string) => this.call<unknown>('DELETE', `/admin/keys/${id(keyId)}/refill`);
  updateKey = (keyId: string, input: AdminUpdateKeyRequest) =>
    this.call<AdminUpdateKeyResponse>('PATCH', `/admin/keys/${id(keyId)}`, { json: input });
  countDocuments = () => this.call<AdminCountDocumentsResponse>('GET', '/admin/documents');
  ingestJsonLines = (text: string) => this.call<AdminIngestDocumentsResponse>('POST', '/admin/documents', { text, type: 'application/x-ndjson' });
  getDocument = (docId: string) => this.call<Record<string, unknown>>('GET', `/admin/documents/${id(docId)}`);
  deleteDocument = (docId: string) => this.call<unknown>('DELETE', `/admin/documents/${id(docId)}`);
  search = (body: AdminSearchRequest) => this.call<AdminSearchResponse>('POST', '/admin/search', { json: body });
  getSynonyms = () => this.call<AdminGetSynonymsResponse>('GET', '/admin/synonyms');
  putSynonyms = (body: AdminPutSynonymsRequest) => this.call<AdminPutSynonymsResponse>('PUT', '/admin/synonyms', { json: body });
  auditLog = (query: Query) => this.call<AdminAuditLogResponse>('GET', pathWith('/admin/audit-log', query));
}
