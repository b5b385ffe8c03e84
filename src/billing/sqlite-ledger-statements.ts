import type Database from 'better-sqlite3';
import { ACCOUNT_COLUMNS } from './accounts.js';
import { KEY_COLUMNS, KEYS_WITH_ACCOUNTS } from './ledger-rows.js';
import type { CapHolder } from './spend-caps.js';

/** The embedded ledger's prepared statements (sqlite-ledger.ts), and the helpers its updates share. */

/** What the ledger does with a prepared statement: typed here, since the driver's own type cannot be named in a declaration. */
export interface Prepared {
  run(...params: unknown[]): Database.RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

function statementOf(db: Database.Database, sql: string): Prepared {
  return db.prepare(sql);
}

export interface DebitedRow {
  balance: number;
  last_debit: number;
  low_balance_threshold: number | null;
}

/** Where a capped debit's spend is counted: the key's own periods, or its account's. */
const SPEND_TABLES: Record<CapHolder, { table: string; column: string }> = {
  key: { table: 'key_spend', column: 'key_id' },
  account: { table: 'account_spend', column: 'account_id' },
};

function spendStatements(db: Database.Database, holder: CapHolder) {
  const { table, column } = SPEND_TABLES[holder];
  return {
    periodSpend: statementOf(db, `SELECT spent, cap_reached_sent FROM ${table} WHERE ${column} = ? AND interval = ? AND period_start = ?`),
    addSpend: statementOf(
      db,
      `INSERT INTO ${table} (${column}, interval, period_start, spent) VALUES (?, ?, ?, ?)
       ON CONFLICT (${column}, interval, period_start) DO UPDATE SET spent = spent + excluded.spent`,
    ),
    capReachedSent: statementOf(
      db,
      `INSERT INTO ${table} (${column}, interval, period_start, spent, cap_reached_sent) VALUES (?, ?, ?, 0, 1)
       ON CONFLICT (${column}, interval, period_start) DO UPDATE SET cap_reached_sent = 1`,
    ),
    resetSpend: statementOf(db, `UPDATE ${table} SET spent = 0 WHERE ${column} = ? AND interval = ? AND period_start = ?`),
    // The holder's charges after `after` not yet in its periods' spend, summed by the period each falls in.
    uncounted: statementOf(
      db,
      `SELECT max(id) AS last, coalesce(sum(CASE WHEN at >= @day THEN credits END), 0) AS day,
         coalesce(sum(CASE WHEN at >= @week THEN credits END), 0) AS week, coalesce(sum(CASE WHEN at >= @month THEN credits END), 0) AS month
       FROM charges WHERE id > @after AND key_id IN (${holder === 'key' ? 'SELECT @holder' : 'SELECT id FROM keys WHERE account_id = @holder'})`,
    ),
  };
}

export function prepareStatements(db: Database.Database) {
  return {
    insertKey: statementOf(
      db,
      `INSERT INTO keys (id, account_id, key_hash, name, status, created_at, rate_limit, expires_at, metadata, spend_caps)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertAccount: statementOf(
      db,
      `INSERT INTO accounts (id, name, external_id, metadata, balance, spend_caps, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    accountByExternalId: statementOf(db, 'SELECT id FROM accounts WHERE external_id = ?'),
    accountById: statementOf(db, `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = ?`),
    accountsPage: statementOf(
      db,
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts
       WHERE (@externalId IS NULL OR external_id = @externalId)
         AND (@nameContains IS NULL OR instr(lower(name), lower(@nameContains)) > 0)
         AND (@afterAt IS NULL OR (created_at, id) < (@afterAt, @afterId))
       ORDER BY created_at DESC, id DESC LIMIT @limit`,
    ),
    accountKeys: statementOf(db, `SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.account_id = ? ORDER BY k.created_at, k.id`),
    updateAccount: statementOf(
      db,
      `UPDATE accounts SET name = CASE WHEN @setName THEN @name ELSE name END,
         external_id = CASE WHEN @setExternalId THEN @externalId ELSE external_id END,
         metadata = CASE WHEN @setMetadata THEN @metadata ELSE metadata END,
         prices = CASE WHEN @setPrices THEN @prices ELSE prices END,
         low_balance_threshold = CASE WHEN @setThreshold THEN @threshold ELSE low_balance_threshold END,
         spend_caps = CASE WHEN @setCaps THEN @caps ELSE spend_caps END WHERE id = @accountId`,
    ),
    spends: { key: spendStatements(db, 'key'), account: spendStatements(db, 'account') },
    capCounted: statementOf(db, 'SELECT charge_id FROM cap_counted WHERE holder_id = ?'),
    setCapCounted: statementOf(
      db,
      'INSERT INTO cap_counted (holder_id, charge_id) VALUES (?, ?) ON CONFLICT (holder_id) DO UPDATE SET charge_id = max(charge_id, excluded.charge_id)',
    ),
    forgetCapCounted: statementOf(db, 'DELETE FROM cap_counted WHERE holder_id = ?'),
    spendOne: statementOf(db, 'UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ? RETURNING balance'),
    insertCharge: statementOf(db, 'INSERT INTO charges (key_id, endpoint, at, idempotency_ref, credits) VALUES (?, ?, ?, ?, ?)'),
    endedKeys: statementOf(db, 'SELECT id FROM keys WHERE expires_at <= ? AND expiry_announced = 0 ORDER BY expires_at LIMIT ?'),
    announceEnd: statementOf(
      db,
      'UPDATE keys SET expiry_announced = 1 WHERE id = ? AND expiry_announced = 0 AND expires_at <= ? RETURNING expires_at',
    ),
    insertCreateGrant: statementOf(db, `INSERT INTO credit_grants (account_id, amount, reason, at) VALUES (?, ?, 'create', ?)`),
    addCreated: statementOf(db, 'UPDATE accounts SET balance = balance + ?, settled_balance = NULL WHERE id = ?'),
    retiredKey: statementOf(
      db,
      `SELECT ${KEY_COLUMNS}, k.key_hash AS current_hash, r.valid_until FROM retired_keys r JOIN keys k ON k.id = r.key_id JOIN accounts a ON a.id = k.account_id WHERE r.key_hash = ?`,
    ),
    forgetRetired: statementOf(db, 'DELETE FROM retired_keys WHERE key_id = ? AND valid_until <= ?'),
    retireHash: statementOf(db, 'INSERT INTO retired_keys (key_hash, key_id, valid_until) SELECT key_hash, id, ? FROM keys WHERE id = ?'),
    setHash: statementOf(db, 'UPDATE keys SET key_hash = ? WHERE id = ?'),
    keyByHash: statementOf(db, `SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.key_hash = ?`),
    keyById: statementOf(db, `SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.id = ?`),
    spenderByHash: statementOf(db, 'SELECT id, account_id, status FROM keys WHERE key_hash = ?'),
    allKeys: statementOf(db, `SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} ORDER BY k.created_at, k.id`),
    setStatus: statementOf(db, `UPDATE keys SET status = ? WHERE id = ? AND status <> 'revoked'`),
    setRateLimit: statementOf(db, 'UPDATE keys SET rate_limit = ? WHERE id = ?'),
    // `count` requests of `cost` credits each: as many as the balance covers, whole. better-sqlite3
    // binds a JS number as a REAL: the cast keeps the division an integer one (5 / 3 = 1, not 1.67).
    debit: statementOf(
      db,
      `UPDATE accounts SET balance = balance - MIN(balance / CAST(@cost AS INTEGER), @count) * @cost,
         last_debit = MIN(balance / CAST(@cost AS INTEGER), @count)
       WHERE id = @accountId AND balance >= @cost RETURNING balance, last_debit, low_balance_threshold`,
    ),
    updateSettings: statementOf(
      db,
      `UPDATE keys SET name = CASE WHEN @setName THEN @name ELSE name END,
         expires_at = CASE WHEN @setExpiry THEN @expiresAt ELSE expires_at END,
         expiry_announced = CASE WHEN @setExpiry THEN 0 ELSE expiry_announced END,
         metadata = CASE WHEN @setMetadata THEN @metadata ELSE metadata END,
         spend_caps = CASE WHEN @setCaps THEN @caps ELSE spend_caps END WHERE id = @keyId`,
    ),
    keysPage: statementOf(
      db,
      `SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS}
       WHERE (@status IS NULL OR k.status = @status) AND (@name IS NULL OR k.name = @name)
         AND (@accountId IS NULL OR k.account_id = @accountId)
         AND (@nameContains IS NULL OR instr(lower(k.name), lower(@nameContains)) > 0)
         AND (@maxBalance IS NULL OR a.balance <= @maxBalance)
         AND (@afterAt IS NULL OR (k.created_at, k.id) < (@afterAt, @afterId))
       ORDER BY k.created_at DESC, k.id DESC LIMIT @limit`,
    ),
  };
}

export const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** The named parameters of one optional setting in a CASE WHEN @set… update: whether to set it, and to what. */
export function setting(flag: string, name: string, value: unknown): Record<string, unknown> {
  return { [`set${flag}`]: value === undefined ? 0 : 1, [name]: value ?? null };
}

export type LedgerStatements = ReturnType<typeof prepareStatements>;
