import type { NewAuditEntry } from '../admin/admin-store.js';
import type { IdempotencyEntry, StoredResponse } from '../idempotency/idempotency-store.js';
import { MAX_BALANCE } from '../rules.js';
import type { AccountRecord, AccountTopUpResult } from './accounts.js';
import type { ChangeRecord, DebitResult, KeyRecord, KeyStatus, TopUpResult } from './ledger.js';

/** The ledger's rules, the same on every store: what a change writes besides itself, what a key may do, what it costs, and why a change is refused. */

/** The rows a change's record adds to its transaction: the audit entry and the completed claim, each when there is one. */
export function changeWrites<Result>(
  record: ChangeRecord<Result> | undefined,
  result: Result,
): { audit: NewAuditEntry | undefined; completion: { entry: IdempotencyEntry; response: StoredResponse } | undefined } {
  const response = record?.claim?.answer(result);
  return {
    audit: record?.audit(result),
    completion: record?.claim && response ? { entry: record.claim.entry, response } : undefined,
  };
}

/** Whether a debit by this key has caps to decide (Ledger.debitCapped): its own or its account's. */
export function hasSpendCaps(key: Pick<KeyRecord, 'spendCaps' | 'accountSpendCaps'>): boolean {
  return key.spendCaps !== null || key.accountSpendCaps !== null;
}

/** Whether a key's end has come at `now` (ms since the epoch). */
export function keyExpired(key: Pick<KeyRecord, 'expiresAt'>, now: number): boolean {
  return key.expiresAt !== null && Date.parse(key.expiresAt) <= now;
}

/**
 * What a request to `endpoint` costs this key: its own price, else the service's (PRICES), else 1.
 * A priced mode (`/query:semantic`) comes first at each level: the key's for the mode, the key's for
 * the endpoint, the service's for the mode, the service's for the endpoint.
 */
export function priceOf(endpoint: string, key: Pick<KeyRecord, 'prices'> | null, prices: Partial<Record<string, number>>, mode?: string): number {
  const own = (mode === undefined ? undefined : key?.prices?.[mode]) ?? key?.prices?.[endpoint];
  return own ?? (mode === undefined ? undefined : prices[mode]) ?? prices[endpoint] ?? 1;
}

/** The webhook events a change of balance from `before` to `after` causes: credits.low and credits.depleted, once per crossing. */
export function balanceCrossings(before: number, after: number, lowMark: number | null): Array<{ type: string; threshold: number }> {
  const marks = [
    { type: 'credits.low', threshold: lowMark },
    { type: 'credits.depleted', threshold: 0 },
  ];
  return marks.filter(
    (mark): mark is { type: string; threshold: number } => mark.threshold !== null && before > mark.threshold && after <= mark.threshold,
  );
}

/**
 * Credits spent since a key's last settlement, taken from its expiring grants soonest-expiring
 * first (`grants` in that order, each with what it had left): what each grant has left after.
 * Whatever they cannot cover came from credits that never expire.
 */
export function settleSpent<T extends { remaining: number }>(grants: T[], spent: number): T[] {
  let left = spent;
  return grants.map((grant) => {
    const taken = Math.min(grant.remaining, left);
    left -= taken;
    return { ...grant, remaining: grant.remaining - taken };
  });
}

/** Why a key took no credit: unknown, not active, or (active) at zero. */
export function refusalFor(status: KeyStatus | undefined): DebitResult {
  if (status === undefined) return { outcome: 'unknown-key' };
  if (status !== 'active') return { outcome: 'inactive', status };
  return { outcome: 'no-credits' };
}

/** Why a top-up of `amount` cannot be granted to this key (read inside the top-up's transaction), or undefined. */
export function topUpRefusal(
  key: KeyRecord | undefined,
  amount: number,
): Exclude<TopUpResult, { outcome: 'topped-up' | 'granted-before' }> | undefined {
  if (!key) return { outcome: 'not-found' };
  if (key.status === 'revoked') return { outcome: 'revoked', key };
  if (key.balance + amount > MAX_BALANCE) return { outcome: 'over-limit', key };
  return undefined;
}

/** Why a top-up of `amount` cannot be granted to this account, or undefined. */
export function accountTopUpRefusal(
  account: AccountRecord | undefined,
  amount: number,
): Extract<AccountTopUpResult, { outcome: 'not-found' | 'over-limit' }> | undefined {
  if (!account) return { outcome: 'not-found' };
  if (account.balance + amount > MAX_BALANCE) return { outcome: 'over-limit', account };
  return undefined;
}
