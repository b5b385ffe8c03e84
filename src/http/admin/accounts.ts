import type { FastifyRequest } from 'fastify';
import { AccountAdmin } from '../../billing/account-admin.js';
import type { AccountRecord } from '../../billing/accounts.js';
import type { SpendCap } from '../../billing/spend-caps.js';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services/services.js';
import type { Store } from '../../store/store.js';
import { keyLifeOf } from './keys.js';

/** An account as the admin API shows it. */
export function adminAccountOf(account: AccountRecord) {
  return {
    id: account.id,
    name: account.name,
    external_id: account.externalId,
    metadata: account.metadata,
    balance: account.balance,
    created_at: account.createdAt,
    prices: account.prices,
    low_balance_threshold: account.lowBalanceThreshold,
    spend_caps: account.spendCaps,
  };
}

/** An account's metadata and spend caps as a request gives them, checked as a key's are (keyLifeOf). */
export function accountLifeOf(
  body: { metadata?: Record<string, unknown> | null; spend_caps?: SpendCap[] | null },
  now: number,
): { metadata?: Record<string, unknown> | null; spendCaps?: SpendCap[] | null } {
  const { metadata, spendCaps } = keyLifeOf({ metadata: body.metadata, spend_caps: body.spend_caps }, now);
  return { metadata, ...(spendCaps !== undefined && { spendCaps }) };
}

/** Account operations on behalf of this request's token, reported to the audit log under its name and request id. */
export function accountsFor(services: Services, request: FastifyRequest): AccountAdmin {
  const token = request.adminToken as { name: string };
  return new AccountAdmin(services.store.ledger, { name: token.name, requestId: request.id }, services.clock);
}

export function accountNotFound(id: string): ApiError {
  return new ApiError('ACCOUNT_NOT_FOUND', `No account has id "${id}".`);
}

export function externalIdTaken(accountId: string): ApiError {
  return new ApiError('EXTERNAL_ID_TAKEN', `Account ${accountId} has this external_id: each account has its own.`);
}

/** The account with this id, or 404. */
export async function existingAccount(store: Store, id: string): Promise<AccountRecord> {
  const account = await store.ledger.findAccount(id);
  if (!account) throw accountNotFound(id);
  return account;
}

/** Forgets what this instance remembers of the account's keys, so that a change to the account applies here at once. */
export async function forgetAccountKeys(services: Services, accountId: string): Promise<void> {
  for (const key of await services.store.ledger.accountKeys(accountId)) services.credits.forget(key.id);
}
