import { cursorOf, placeOf } from '../platform/cursor.js';
import type { KeyRecord, KeyStatus } from './ledger.js';
import type { SpendCap } from './spend-caps.js';

/** How both stores read a key: its row, its columns and tables in SQL, and pages of keys. */

/** A key as both databases return it (PostgreSQL gives created_at as a Date). */
export interface KeyRow {
  id: string;
  account_id: string;
  name: string;
  status: KeyStatus;
  balance: number;
  created_at: string | Date;
  rate_limit: number | null;
  expiring_grants: number;
  /** JSON text in SQLite, an object from PostgreSQL's jsonb. */
  prices: string | Record<string, number> | null;
  low_balance_threshold: number | null;
  expires_at: string | Date | null;
  /** JSON text in SQLite, an object from PostgreSQL's jsonb. */
  metadata: string | Record<string, unknown> | null;
  spend_caps: string | SpendCap[] | null;
  account_spend_caps: string | SpendCap[] | null;
}

/** A key's columns, read from KEYS_WITH_ACCOUNTS: what belongs to its account comes from the account's row. */
export const KEY_COLUMNS =
  'k.id, k.account_id, k.name, k.status, a.balance, k.created_at, k.rate_limit, a.expiring_grants, a.prices, a.low_balance_threshold, k.expires_at, k.metadata, k.spend_caps, a.spend_caps AS account_spend_caps';

export const KEYS_WITH_ACCOUNTS = 'keys k JOIN accounts a ON a.id = k.account_id';

export function keyFromRow(row: KeyRow): KeyRecord {
  const createdAt = row.created_at instanceof Date ? row.created_at.toISOString() : row.created_at;
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    status: row.status,
    balance: Number(row.balance),
    createdAt,
    rateLimit: row.rate_limit,
    expiringGrants: Number(row.expiring_grants),
    prices: typeof row.prices === 'string' ? (JSON.parse(row.prices) as Record<string, number>) : row.prices,
    lowBalanceThreshold: row.low_balance_threshold === null ? null : Number(row.low_balance_threshold),
    expiresAt: row.expires_at instanceof Date ? row.expires_at.toISOString() : row.expires_at,
    metadata: typeof row.metadata === 'string' ? (JSON.parse(row.metadata) as Record<string, unknown>) : row.metadata,
    spendCaps: typeof row.spend_caps === 'string' ? (JSON.parse(row.spend_caps) as SpendCap[]) : row.spend_caps,
    accountSpendCaps: typeof row.account_spend_caps === 'string' ? (JSON.parse(row.account_spend_caps) as SpendCap[]) : row.account_spend_caps,
  };
}

/** A key's page cursor, and back (undefined for a cursor that is not one): the place of its creation in the newest-first order. */
export const keyCursorPlace = placeOf;

/** The page of `limit` keys read with one more row: the next cursor when that row exists. */
export function keyPage(rows: KeyRecord[], limit: number): { keys: KeyRecord[]; nextCursor: string | null } {
  const keys = rows.slice(0, limit);
  return { keys, nextCursor: rows.length > limit ? cursorOf(keys[keys.length - 1]) : null };
}
