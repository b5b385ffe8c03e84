import type { PoolClient } from 'pg';
import { insertAudit } from '../admin/postgres-admin-store.js';
import { completeClaim } from '../idempotency/postgres-idempotency.js';
import type { PostgresDatabase, Queryable } from '../platform/postgres-database.js';
import { ACCOUNT_COLUMNS, type AccountRecord, type AccountRow, type AccountSettings, accountFromRow } from './accounts.js';
import type { ChangeRecord, KeyRecord } from './ledger.js';
import { KEY_COLUMNS, KEYS_WITH_ACCOUNTS, type KeyRow, keyFromRow } from './ledger-rows.js';
import { changeWrites } from './ledger-rules.js';

// How every part of the shared ledger makes a change: one transaction holding the key's or the
// account's row lock, the change and its record (audit entry, completed claim); and how they read
// keys and accounts.

/** The key, its row and its account's locked until the transaction ends. */
export async function lockedKey(client: PoolClient, keyId: string): Promise<KeyRecord | undefined> {
  return keyOf((await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.id = $1 FOR UPDATE`, [keyId])).rows);
}

export async function keyById(client: Queryable, keyId: string): Promise<KeyRecord | undefined> {
  return keyOf((await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.id = $1`, [keyId])).rows);
}

export async function accountById(client: Queryable, accountId: string, lock = ''): Promise<AccountRecord | undefined> {
  const { rows } = await client.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1 ${lock}`, [accountId]);
  return rows[0] && accountFromRow(rows[0]);
}

export function keyOf(rows: KeyRow[]): KeyRecord | undefined {
  return rows[0] && keyFromRow(rows[0]);
}

export const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * A change to one key in a transaction holding the key's row lock and its account's, with its
 * record (audit entry, completed claim): all of it commits, or none.
 */
export function changeKey<T>(
  db: PostgresDatabase,
  keyId: string,
  record: ChangeRecord<T> | undefined,
  change: (client: PoolClient, key: KeyRecord | undefined) => Promise<T>,
): Promise<T> {
  return db.transaction(async (client) => {
    const result = await change(client, await lockedKey(client, keyId));
    await writeChange(client, record, result);
    return result;
  });
}

/** A change to one account in a transaction holding its row lock, with its record: all of it commits, or none. */
export function changeAccount<T>(
  db: PostgresDatabase,
  accountId: string,
  record: ChangeRecord<T> | undefined,
  change: (client: PoolClient, account: AccountRecord | undefined) => Promise<T>,
): Promise<T> {
  return db.transaction(async (client) => {
    const result = await change(client, await accountById(client, accountId, 'FOR UPDATE'));
    await writeChange(client, record, result);
    return result;
  });
}

export async function writeChange<T>(client: PoolClient, record: ChangeRecord<T> | undefined, result: T): Promise<void> {
  const { audit, completion } = changeWrites(record, result);
  if (audit) await insertAudit(client, audit);
  if (completion) await completeClaim(client, completion.entry, completion.response);
}

export async function grantedBefore(client: PoolClient, idempotencyRef: string): Promise<boolean> {
  return ((await client.query('SELECT 1 FROM credit_grants WHERE idempotency_ref = $1', [idempotencyRef])).rowCount ?? 0) > 0;
}

/** Sets what is given of an account's settings; absent ones stay. */
export async function updateAccountRow(client: PoolClient, accountId: string, settings: AccountSettings): Promise<void> {
  const columns: Array<[string, unknown, string]> = [
    ['name', settings.name, 'text'],
    ['external_id', settings.externalId, 'text'],
    ['metadata', settings.metadata === undefined ? undefined : json(settings.metadata), 'jsonb'],
    ['prices', settings.prices === undefined ? undefined : json(settings.prices), 'jsonb'],
    ['low_balance_threshold', settings.lowBalanceThreshold, 'bigint'],
    ['spend_caps', settings.spendCaps === undefined ? undefined : json(settings.spendCaps), 'jsonb'],
  ];
  const given = columns.filter(([, value]) => value !== undefined);
  if (given.length === 0) return;
  const sets = given.map(([column, , type], index) => `${column} = $${index + 2}::${type}`).join(', ');
  await client.query(`UPDATE accounts SET ${sets} WHERE id = $1`, [accountId, ...given.map(([, value]) => value)]);
}
