import type { FastifyRequest } from 'fastify';
import type { AdminTokenRecord } from '../../admin/admin-store.js';
import { KeyAdmin, type SettingsChange } from '../../billing/key-admin.js';
import type { KeyRecord } from '../../billing/ledger.js';
import type { SpendCap } from '../../billing/spend-caps.js';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services/services.js';
import type { Store } from '../../store/store.js';
import { MAX_METADATA_BYTES } from './schemas.js';

/** A key as the admin API shows it (never the plain key, which only creation answers). */
export function adminKeyOf(key: KeyRecord) {
  return {
    id: key.id,
    account_id: key.accountId,
    name: key.name,
    balance: key.balance,
    status: key.status,
    rate: key.rateLimit,
    created_at: key.createdAt,
    prices: key.prices,
    low_balance_threshold: key.lowBalanceThreshold,
    expires_at: key.expiresAt,
    metadata: key.metadata,
    spend_caps: key.spendCaps,
  };
}

/** A key's end, metadata and spend caps as a request gives them, checked: 400 for an end not in the future, metadata over 4 KB or two caps of one interval. */
export function keyLifeOf(
  body: { expires_at?: string | null; metadata?: Record<string, unknown> | null; spend_caps?: SpendCap[] | null },
  now: number,
): { expiresAt?: string | null; metadata?: Record<string, unknown> | null; spendCaps?: SpendCap[] | null } {
  const expiresAt = body.expires_at === undefined || body.expires_at === null ? body.expires_at : new Date(body.expires_at).toISOString();
  if (expiresAt && !(Date.parse(expiresAt) > now)) {
    throw new ApiError(
      'BAD_REQUEST',
      `expires_at must be later than now (${new Date(now).toISOString()}); to stop a key at once, disable or revoke it.`,
    );
  }
  const bytes = body.metadata ? Buffer.byteLength(JSON.stringify(body.metadata)) : 0;
  if (bytes > MAX_METADATA_BYTES) throw new ApiError('BAD_REQUEST', `metadata is ${bytes} bytes as JSON; it may hold at most ${MAX_METADATA_BYTES}.`);
  const intervals = (body.spend_caps ?? []).map((cap) => cap.interval);
  if (new Set(intervals).size < intervals.length)
    throw new ApiError('BAD_REQUEST', 'spend_caps holds at most one cap per interval (day, week, month).');
  const spendCaps = body.spend_caps?.length === 0 ? null : body.spend_caps;
  return { expiresAt, metadata: body.metadata, ...(spendCaps !== undefined && { spendCaps }) };
}

/** Key operations on behalf of this request's token, reported to the audit log under its name and request id. */
export function keysFor(services: Services, request: FastifyRequest): KeyAdmin {
  const token = request.adminToken as AdminTokenRecord;
  const { store, clock } = services;
  return new KeyAdmin(store.ledger, { name: token.name, requestId: request.id }, clock);
}

/**
 * The key a rate or settings change left, or its 404 or 409. This instance forgets what it
 * remembered of the key, so the change applies here at once (elsewhere within IDENTIFY_CACHE_MS).
 */
export function changedKey(services: Services, change: SettingsChange, id: string): KeyRecord {
  if (change.outcome === 'not-found') throw new ApiError('KEY_NOT_FOUND', `No key has id "${id}".`);
  if (change.outcome === 'revoked') throw new ApiError('KEY_REVOKED');
  services.credits.forget(id);
  return change.key;
}

/** The key with this id, or 404. Ids only: a plain key never travels in an admin URL. */
export async function existingKey(store: Store, id: string): Promise<KeyRecord> {
  const key = await store.ledger.findKeyById(id);
  if (!key) throw new ApiError('KEY_NOT_FOUND', `No key has id "${id}".`);
  return key;
}
