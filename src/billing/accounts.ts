import { randomBytes } from 'node:crypto';
import { cursorOf } from '../platform/cursor.js';
import type { SpendCap } from './spend-caps.js';

/**
 * Accounts: the customer behind one or more keys. The balance, its grants (expiring or not), the
 * refill plan, prices and the low-balance mark belong to the account; every key of it spends from
 * that one balance. A key created without an account gets one of its own, whose id shares the
 * key's hex digits (key_ab12… belongs to acct_ab12…); the migration gives every key of an older
 * store the same.
 */

/** An account id: `acct_` and 16 hex digits. */
export const ACCOUNT_ID_PATTERN = /^acct_[0-9a-f]{16}$/;

export function newAccountId(): string {
  return `acct_${randomBytes(8).toString('hex')}`;
}

/** The id of the account a key made without one gets: the key's own digits. */
export function ownAccountId(keyId: string): string {
  return `acct_${keyId.startsWith('key_') ? keyId.slice(4) : keyId}`;
}

export interface AccountRecord {
  id: string;
  name: string;
  /** The operator's own id for this customer, unique among accounts; null: none. */
  externalId: string | null;
  metadata: Record<string, unknown> | null;
  balance: number;
  createdAt: string;
  /** Grants that expire with credits left as of their last settlement. */
  expiringGrants: number;
  prices: Record<string, number> | null;
  lowBalanceThreshold: number | null;
  /** Caps over what every key of the account spends together; null: none. */
  spendCaps: SpendCap[] | null;
}

export interface NewAccount {
  id: string;
  name: string;
  externalId?: string | null;
  metadata?: Record<string, unknown> | null;
  credits: number;
  spendCaps?: SpendCap[] | null;
}

/** What PATCH /admin/accounts/{id} may change; absent fields stay, null clears. */
export interface AccountSettings {
  name?: string;
  externalId?: string | null;
  metadata?: Record<string, unknown> | null;
  prices?: Record<string, number> | null;
  lowBalanceThreshold?: number | null;
  spendCaps?: SpendCap[] | null;
}

/** Which accounts to list, newest first; `cursor` is a previous page's nextCursor. */
export interface AccountQuery {
  limit: number;
  cursor: string | null;
  externalId?: string;
  /** Accounts whose name contains this text, whatever its case. */
  nameContains?: string;
}

export type AccountCreation = { outcome: 'created'; account: AccountRecord } | { outcome: 'external-id-taken'; accountId: string };

export type AccountUpdate =
  | { outcome: 'changed'; account: AccountRecord }
  | { outcome: 'not-found' }
  | { outcome: 'external-id-taken'; accountId: string };

export type AccountTopUpResult =
  | { outcome: 'topped-up'; account: AccountRecord }
  /** A grant with this idempotency ref was made before (its answer was lost): nothing more was added. */
  | { outcome: 'granted-before'; account: AccountRecord }
  | { outcome: 'not-found' }
  /** The balance would pass MAX_BALANCE: nothing was added. */
  | { outcome: 'over-limit'; account: AccountRecord };

/** A key's new place: the account it joins (which must exist), or one of its own. */
export type KeyAccount = { accountId: string } | { ownAccount: true };

/** Credits an account's keys spent on each endpoint in a span, and how many requests. */
export interface AccountUsageRow {
  keyId: string;
  endpoint: string;
  charges: number;
  credits: number;
}

/** An account as both databases return it. */
export interface AccountRow {
  id: string;
  name: string;
  external_id: string | null;
  metadata: string | Record<string, unknown> | null;
  balance: number | string;
  created_at: string | Date;
  expiring_grants: number | string;
  prices: string | Record<string, number> | null;
  low_balance_threshold: number | string | null;
  spend_caps: string | SpendCap[] | null;
}

export const ACCOUNT_COLUMNS = 'id, name, external_id, metadata, balance, created_at, expiring_grants, prices, low_balance_threshold, spend_caps';

const parsed = <T>(value: string | T | null): T | null => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

export function accountFromRow(row: AccountRow): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    externalId: row.external_id,
    metadata: parsed(row.metadata),
    balance: Number(row.balance),
    createdAt: row.created_at instanceof Date ? row.created_at.toISOString() : row.created_at,
    expiringGrants: Number(row.expiring_grants),
    prices: parsed(row.prices),
    lowBalanceThreshold: row.low_balance_threshold === null ? null : Number(row.low_balance_threshold),
    spendCaps: parsed(row.spend_caps),
  };
}

/** The page of `limit` accounts read with one more row: the next cursor when that row exists. */
export function accountPage(rows: AccountRecord[], limit: number): { accounts: AccountRecord[]; nextCursor: string | null } {
  const accounts = rows.slice(0, limit);
  return { accounts, nextCursor: rows.length > limit ? cursorOf(accounts[accounts.length - 1]) : null };
}

/** The keys an event concerns: always its account, and the key when one caused it. */
export interface EventHolder {
  accountId: string;
  keyId?: string;
}

export function holderOf(key: { id: string; accountId: string }): EventHolder {
  return { accountId: key.accountId, keyId: key.id };
}
