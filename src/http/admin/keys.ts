import type { FastifyRequest } from 'fastify';
import type { AdminTokenRecord } from '../../admin/admin-store.js';
import { KeyAdmin, type SettingsChange } from '../../billing/key-admin.js';
import type { KeyRecord } from '../../billing/ledger.js';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services/services.js';
import type { Store } from '../../store/store.js';

/** A key as the admin API shows it (never the plain key, which only creation answers). */
export function adminKeyOf(key: KeyRecord) {
  return {
    id: key.id,
    name: key.name,
    balance: key.balance,
    status: key.status,
    rate: key.rateLimit,
    created_at: key.createdAt,
    prices: key.prices,
    low_balance_threshold: key.lowBalanceThreshold,
  };
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
