import type { PoolClient } from 'pg';
import { insertAudit } from '../admin/postgres-admin-store.js';
import { completeClaim } from '../idempotency/postgres-idempotency.js';
import type { PostgresDatabase, Queryable } from '../platform/postgres-database.js';
import { refuseUnstorable } from '../platform/store-faults.js';
import {
  ACCOUNT_COLUMNS,
  type AccountCreation,
  type AccountQuery,
  type AccountRecord,
  type AccountRow,
  type AccountSettings,
  type AccountTopUpResult,
  type AccountUpdate,
  type AccountUsageRow,
  accountFromRow,
  accountPage,
  holderOf,
  type NewAccount,
  ownAccountId,
} from './accounts.js';
import { DebitBatcher, type DebitJob, positionsByKey } from './debit-batcher.js';
import {
  type AccountRefillChange,
  accountTopUpRefusal,
  type ChangeRecord,
  type ChargeRecord,
  type CreditGrant,
  changeWrites,
  type DebitOptions,
  type DebitResult,
  type ExpiringCredits,
  type Expiry,
  type GrantOptions,
  KEY_COLUMNS,
  KEYS_WITH_ACCOUNTS,
  type KeyActivity,
  type KeyEnd,
  type KeyQuery,
  type KeyRecord,
  type KeyRow,
  type KeySettings,
  type KeyStatus,
  keyCursorPlace,
  keyFromRow,
  keyPage,
  type Ledger,
  type LedgerAudit,
  type NewKey,
  type RefillChange,
  type RetiredKey,
  type RollResult,
  refusalFor,
  type TopUpResult,
  topUpRefusal,
  type UsageQuery,
  type UsageRow,
} from './ledger.js';

import { OutcomeWriter } from './outcome-writer.js';
import { debitCappedKey, recountCaps, SPEND_TABLES } from './postgres-capped-debits.js';
import { applyRefill, expireGrant, expiringCredits, grant, recordEvent, refillRule, setRefill } from './postgres-credits.js';
import type { Refill, RefillPlan, RefillRule } from './refills.js';
import { capPeriods, type SpendCap } from './spend-caps.js';

interface DebitedRow {
  key_hash: string;
  balance: number | null;
  granted: number | null;
  charge_ids: number[] | null;
  status: KeyStatus | null;
}

/** The key, its row and its account's locked until the transaction ends. */
async function lockedKey(client: PoolClient, keyId: string): Promise<KeyRecord | undefined> {
  return keyOf((await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.id = $1 FOR UPDATE`, [keyId])).rows);
}

async function keyById(client: Queryable, keyId: string): Promise<KeyRecord | undefined> {
  return keyOf((await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.id = $1`, [keyId])).rows);
}

async function accountById(client: Queryable, accountId: string, lock = ''): Promise<AccountRecord | undefined> {
  const { rows } = await client.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1 ${lock}`, [accountId]);
  return rows[0] && accountFromRow(rows[0]);
}

function keyOf(rows: KeyRow[]): KeyRecord | undefined {
  return rows[0] && keyFromRow(rows[0]);
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * The ledger in PostgreSQL, shared by every instance. Debits follow the embedded ledger's design
 * (per account and batch, one conditional UPDATE taking what the balance covers) in one stored
 * function per batch, so a batch is one round trip and holds no row lock across the network.
 */
export class PostgresLedger implements Ledger {
  private readonly debits = new DebitBatcher((jobs) => this.runDebits(jobs));
  /** Debits of keys with spend caps (their own or their account's), by key id, batched as the others: a burst past a cap takes the account's row lock once per batch. */
  private readonly cappedDebits = new DebitBatcher((jobs) => this.runCappedDebits(jobs));
  private readonly outcomes = new OutcomeWriter(async (outcomes) => {
    await this.db.query('SELECT record_outcomes($1, $2)', [outcomes.map(([id]) => id), outcomes.map(([, status]) => status)]);
  });

  /** `lowBalanceThreshold`: LOW_BALANCE_THRESHOLD, the mark of accounts that have none of their own. */
  constructor(
    private readonly db: PostgresDatabase,
    private readonly lowBalanceThreshold: number | null = null,
  ) {}

  async createKey(input: NewKey, record?: ChangeRecord<KeyRecord>): Promise<KeyRecord> {
    refuseUnstorable({ name: input.name, metadata: input.metadata, account: input.account });
    return this.db.transaction(async (client) => {
      const joining = input.account && 'accountId' in input.account ? input.account.accountId : undefined;
      const accountId = joining ?? ownAccountId(input.id);
      if (!joining) {
        await client.query('INSERT INTO accounts (id, name, balance) VALUES ($1, $2, $3)', [accountId, input.name, input.credits]);
        await client.query(`INSERT INTO credit_grants (account_id, amount, reason) VALUES ($1, $2, 'create')`, [accountId, input.credits]);
      }
      await client.query(
        `INSERT INTO keys (id, account_id, key_hash, name, status, rate_limit, expires_at, metadata, spend_caps)
         VALUES ($1, $2, $3, $4, 'active', $5, $6, $7, $8)`,
        [
          input.id,
          accountId,
          input.keyHash,
          input.name,
          input.rateLimit ?? null,
          input.expiresAt ?? null,
          json(input.metadata),
          json(input.spendCaps),
        ],
      );
      if (joining && input.credits > 0) await grant(client, { accountId, keyId: input.id }, input.credits, 'create');
      const key = (await keyById(client, input.id)) as KeyRecord;
      await writeChange(client, record, key);
      return key;
    });
  }

  async createAccount(input: NewAccount, record?: ChangeRecord<AccountCreation>): Promise<AccountCreation> {
    refuseUnstorable({ name: input.name, external_id: input.externalId, metadata: input.metadata });
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<AccountRow>(
        `INSERT INTO accounts (id, name, external_id, metadata, balance, spend_caps) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (external_id) DO NOTHING RETURNING ${ACCOUNT_COLUMNS}`,
        [input.id, input.name, input.externalId ?? null, json(input.metadata), input.credits, json(input.spendCaps)],
      );
      let result: AccountCreation;
      if (rows[0]) {
        await client.query(`INSERT INTO credit_grants (account_id, amount, reason) VALUES ($1, $2, 'create')`, [input.id, input.credits]);
        result = { outcome: 'created', account: accountFromRow(rows[0]) };
      } else {
        const taken = await client.query<{ id: string }>('SELECT id FROM accounts WHERE external_id = $1', [input.externalId]);
        result = { outcome: 'external-id-taken', accountId: taken.rows[0]?.id ?? '' };
      }
      await writeChange(client, record, result);
      return result;
    });
  }

  async findAccount(id: string): Promise<AccountRecord | undefined> {
    return accountById(this.db, id);
  }

  /** Ordered by creation to the millisecond, as the cursor holds it (PostgreSQL keeps microseconds). */
  async listAccountsPage(query: AccountQuery): Promise<{ accounts: AccountRecord[]; nextCursor: string | null }> {
    const after = query.cursor === null ? undefined : keyCursorPlace(query.cursor);
    const { rows } = await this.db.query<AccountRow>(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts
       WHERE ($1::text IS NULL OR external_id = $1) AND ($2::text IS NULL OR strpos(lower(name), lower($2)) > 0)
         AND ($3::timestamptz IS NULL OR (date_trunc('milliseconds', created_at), id) < ($3::timestamptz, $4))
       ORDER BY date_trunc('milliseconds', created_at) DESC, id DESC LIMIT $5`,
      [query.externalId ?? null, query.nameContains ?? null, after?.createdAt ?? null, after?.id ?? '', query.limit + 1],
    );
    return accountPage(rows.map(accountFromRow), query.limit);
  }

  async accountKeys(accountId: string): Promise<KeyRecord[]> {
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.account_id = $1 ORDER BY k.created_at, k.id`,
      [accountId],
    );
    return rows.map(keyFromRow);
  }

  async updateAccount(accountId: string, settings: AccountSettings, record?: ChangeRecord<AccountUpdate>): Promise<AccountUpdate> {
    refuseUnstorable({ name: settings.name, external_id: settings.externalId, metadata: settings.metadata });
    return this.changeAccount(accountId, record, async (client, account): Promise<AccountUpdate> => {
      if (!account) return { outcome: 'not-found' };
      if (settings.externalId) {
        const taken = await client.query<{ id: string }>('SELECT id FROM accounts WHERE external_id = $1 AND id <> $2', [
          settings.externalId,
          accountId,
        ]);
        if (taken.rows[0]) return { outcome: 'external-id-taken', accountId: taken.rows[0].id };
      }
      await updateAccountRow(client, accountId, settings);
      if (settings.spendCaps !== undefined) await recountCaps(client, 'account', accountId, settings.spendCaps, Date.now());
      return { outcome: 'changed', account: (await accountById(client, accountId)) as AccountRecord };
    });
  }

  async topUpAccount(
    accountId: string,
    amount: number,
    options: GrantOptions = {},
    record?: ChangeRecord<AccountTopUpResult>,
  ): Promise<AccountTopUpResult> {
    return this.changeAccount(accountId, record, async (client, account): Promise<AccountTopUpResult> => {
      if (account && options.idempotencyRef !== undefined && (await grantedBefore(client, options.idempotencyRef)))
        return { outcome: 'granted-before', account };
      const refusal = accountTopUpRefusal(account, amount);
      if (refusal) return refusal;
      await grant(client, { accountId }, amount, 'topup', options);
      return { outcome: 'topped-up', account: (await accountById(client, accountId)) as AccountRecord };
    });
  }

  async setAccountRefill(
    accountId: string,
    plan: RefillPlan | null,
    now: string,
    record?: ChangeRecord<AccountRefillChange>,
  ): Promise<AccountRefillChange> {
    return this.changeAccount(accountId, record, async (client, account): Promise<AccountRefillChange> => {
      if (!account) return { outcome: 'not-found' };
      const change = await setRefill(client, accountId, plan, now);
      return { outcome: 'set', ...change, balance: change.refill?.balance ?? account.balance };
    });
  }

  async accountCharges(accountId: string, limit: number): Promise<ChargeRecord[]> {
    const { rows } = await this.db.query<{ id: string; key_id: string; endpoint: string; at: Date; outcome_status: number | null; credits: string }>(
      `SELECT c.id, c.key_id, c.endpoint, c.at, COALESCE(c.outcome_status, charge_outcome(c.id)) AS outcome_status, c.credits
       FROM charges c JOIN keys k ON k.id = c.key_id WHERE k.account_id = $1 ORDER BY c.id DESC LIMIT $2`,
      [accountId, limit],
    );
    return rows.map((row) => ({
      id: Number(row.id),
      keyId: row.key_id,
      endpoint: row.endpoint,
      at: row.at.toISOString(),
      outcomeStatus: row.outcome_status,
      credits: Number(row.credits),
    }));
  }

  async accountUsage(accountId: string, from: string, to: string): Promise<AccountUsageRow[]> {
    const { rows } = await this.db.query<{ key_id: string; endpoint: string; charges: string; credits: string }>(
      `SELECT c.key_id, c.endpoint, count(*) AS charges, sum(c.credits) AS credits FROM charges c JOIN keys k ON k.id = c.key_id
       WHERE k.account_id = $1 AND c.at >= $2 AND c.at < $3 GROUP BY c.key_id, c.endpoint ORDER BY c.key_id, c.endpoint`,
      [accountId, from, to],
    );
    return rows.map((row) => ({ keyId: row.key_id, endpoint: row.endpoint, charges: Number(row.charges), credits: Number(row.credits) }));
  }

  async findKeyByHash(keyHash: string): Promise<KeyRecord | undefined> {
    return keyOf(
      (await this.db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.key_hash = $1`, [keyHash], 'key-by-hash')).rows,
    );
  }

  /** Ordered by creation to the millisecond, as the cursor holds it (PostgreSQL keeps microseconds). */
  async listKeysPage(query: KeyQuery): Promise<{ keys: KeyRecord[]; nextCursor: string | null }> {
    const after = query.cursor === null ? undefined : keyCursorPlace(query.cursor);
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS}
       WHERE ($1::text IS NULL OR k.status = $1) AND ($2::text IS NULL OR k.name = $2)
         AND ($3::timestamptz IS NULL OR (date_trunc('milliseconds', k.created_at), k.id) < ($3::timestamptz, $4))
         AND ($6::text IS NULL OR strpos(lower(k.name), lower($6)) > 0) AND ($7::bigint IS NULL OR a.balance <= $7)
         AND ($8::text IS NULL OR k.account_id = $8)
       ORDER BY date_trunc('milliseconds', k.created_at) DESC, k.id DESC LIMIT $5`,
      [
        query.status ?? null,
        query.name ?? null,
        after?.createdAt ?? null,
        after?.id ?? '',
        query.limit + 1,
        query.nameContains ?? null,
        query.maxBalance ?? null,
        query.accountId ?? null,
      ],
    );
    return keyPage(rows.map(keyFromRow), query.limit);
  }

  async keyActivity(keyId: string): Promise<KeyActivity> {
    const { rows } = await this.db.query<{ endpoint: string; n: number; last: Date }>(
      'SELECT endpoint, count(*) AS n, max(at) AS last FROM charges WHERE key_id = $1 GROUP BY endpoint',
      [keyId],
    );
    const last = rows.reduce<Date | null>((latest, row) => (latest === null || row.last > latest ? row.last : latest), null);
    return { lastUsedAt: last?.toISOString() ?? null, chargesByEndpoint: Object.fromEntries(rows.map((row) => [row.endpoint, row.n])) };
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    const { rows } = await this.db.query<{ bucket: Date; endpoint: string; status: number | null; n: number; credits: number }>(
      `SELECT date_trunc($1, at, 'UTC') AS bucket, endpoint, COALESCE(outcome_status, charge_outcome(id)) AS status, count(*) AS n,
         sum(credits)::bigint AS credits FROM charges WHERE at >= $2 AND at < $3 AND ($4::text IS NULL OR key_id = $4)
         AND ($5::text IS NULL OR key_id IN (SELECT id FROM keys WHERE account_id = $5))
       GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [query.bucket, query.from, query.to, query.keyId ?? null, query.accountId ?? null],
    );
    return rows.map((row) => ({ start: row.bucket.toISOString(), endpoint: row.endpoint, status: row.status, count: row.n, credits: row.credits }));
  }

  async topSpenders(from: string, to: string, limit: number): Promise<Array<{ keyId: string; name: string; charges: number; credits: number }>> {
    const { rows } = await this.db.query<{ key_id: string; name: string; n: number; credits: string }>(
      `SELECT c.key_id, k.name, count(*) AS n, sum(c.credits)::bigint AS credits FROM charges c JOIN keys k ON k.id = c.key_id
       WHERE c.at >= $1 AND c.at < $2 GROUP BY c.key_id, k.name ORDER BY credits DESC, n DESC, c.key_id LIMIT $3`,
      [from, to, limit],
    );
    return rows.map((row) => ({ keyId: row.key_id, name: row.name, charges: Number(row.n), credits: Number(row.credits) }));
  }

  async findKeyById(id: string): Promise<KeyRecord | undefined> {
    return keyById(this.db, id);
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} ORDER BY k.created_at, k.id`)).rows.map(keyFromRow);
  }

  async topUp(keyId: string, amount: number, options: GrantOptions = {}, record?: ChangeRecord<TopUpResult>): Promise<TopUpResult> {
    return this.changeKey(keyId, record, async (client, key): Promise<TopUpResult> => {
      if (key && options.idempotencyRef !== undefined && (await grantedBefore(client, options.idempotencyRef)))
        return { outcome: 'granted-before', key };
      const refusal = topUpRefusal(key, amount);
      if (refusal) return refusal;
      await grant(client, holderOf(key as KeyRecord), amount, 'topup', options);
      return { outcome: 'topped-up', key: (await keyById(client, keyId)) as KeyRecord };
    });
  }

  async expireDue(now: string, limit: number): Promise<Expiry[]> {
    const { rows } = await this.db.query<{ id: string; account_id: string }>(
      'SELECT id, account_id FROM credit_grants WHERE remaining > 0 AND expires_at <= $1 ORDER BY expires_at, id LIMIT $2',
      [now, limit],
    );
    const expiries: Expiry[] = [];
    for (const due of rows) {
      const expiry = await this.changeAccount(due.account_id, undefined, (client) => expireGrant(client, due.id, due.account_id));
      if (expiry) expiries.push(expiry);
    }
    return expiries;
  }

  async expiringCredits(accountId: string): Promise<ExpiringCredits[]> {
    return expiringCredits(this.db, accountId);
  }

  async refillRule(accountId: string): Promise<RefillRule | null> {
    return refillRule(this.db, accountId);
  }

  async setRefill(keyId: string, plan: RefillPlan | null, now: string, record?: ChangeRecord<RefillChange>): Promise<RefillChange> {
    return this.changeKey(keyId, record, async (client, key): Promise<RefillChange> => {
      if (!key) return { outcome: 'not-found' };
      if (key.status === 'revoked' && plan !== null) return { outcome: 'revoked', key };
      const change = await setRefill(client, key.accountId, plan, now);
      return { outcome: 'set', ...change, balance: change.refill?.balance ?? key.balance };
    });
  }

  async refillDue(now: string, limit: number): Promise<Refill[]> {
    const { rows } = await this.db.query<{ account_id: string }>(
      'SELECT account_id FROM refill_rules WHERE next_refill_at <= $1 ORDER BY next_refill_at LIMIT $2',
      [now, limit],
    );
    const refills: Refill[] = [];
    for (const { account_id: accountId } of rows) {
      const refill = await this.changeAccount(accountId, undefined, (client) => applyRefill(client, accountId, now));
      if (refill) refills.push(refill);
    }
    return refills;
  }

  async announceExpiredKeys(now: string, limit: number): Promise<KeyEnd[]> {
    const { rows } = await this.db.query<{ id: string }>(
      'SELECT id FROM keys WHERE expires_at <= $1 AND NOT expiry_announced ORDER BY expires_at LIMIT $2',
      [now, limit],
    );
    const ends: KeyEnd[] = [];
    for (const { id } of rows) {
      const end = await this.changeKey(id, undefined, async (client, key) => {
        const announced = await client.query<{ expires_at: Date }>(
          'UPDATE keys SET expiry_announced = true WHERE id = $1 AND NOT expiry_announced AND expires_at <= $2 RETURNING expires_at',
          [id, now],
        );
        const row = announced.rows[0];
        if (!row || !key) return undefined;
        const expiredAt = row.expires_at.toISOString();
        await recordEvent(client, 'key.expired', holderOf(key), { balance: key.balance, expired_at: expiredAt });
        return { keyId: id, expiredAt };
      });
      if (end) ends.push(end);
    }
    return ends;
  }

  async findRetiredKey(keyHash: string): Promise<RetiredKey | undefined> {
    const { rows } = await this.db.query<KeyRow & { current_hash: string; valid_until: Date }>(
      `SELECT ${KEY_COLUMNS}, k.key_hash AS current_hash, r.valid_until FROM retired_keys r JOIN keys k ON k.id = r.key_id JOIN accounts a ON a.id = k.account_id
       WHERE r.key_hash = $1`,
      [keyHash],
    );
    const row = rows[0];
    return row && { key: keyFromRow(row), keyHash: row.current_hash, validUntil: row.valid_until.toISOString() };
  }

  async rollKey(
    keyId: string,
    newKeyHash: string,
    oldKeyValidUntil: string | null,
    now: string,
    record?: ChangeRecord<RollResult>,
  ): Promise<RollResult> {
    return this.changeKey(keyId, record, async (client, key): Promise<RollResult> => {
      if (!key) return { outcome: 'not-found' };
      if (key.status === 'revoked') return { outcome: 'revoked', key };
      await client.query('DELETE FROM retired_keys WHERE key_id = $1 AND valid_until <= $2', [keyId, now]);
      if (oldKeyValidUntil !== null) {
        await client.query('INSERT INTO retired_keys (key_hash, key_id, valid_until) SELECT key_hash, id, $2 FROM keys WHERE id = $1', [
          keyId,
          oldKeyValidUntil,
        ]);
      }
      await client.query('UPDATE keys SET key_hash = $2 WHERE id = $1', [keyId, newKeyHash]);
      await recordEvent(client, 'key.rolled', holderOf(key), { balance: key.balance, old_key_valid_until: oldKeyValidUntil });
      return { outcome: 'rolled', key };
    });
  }

  async setKeyRateLimit(keyId: string, rateLimit: number | null, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return this.changeKey(keyId, record, async (client) => {
      await client.query('UPDATE keys SET rate_limit = $2 WHERE id = $1', [keyId, rateLimit]);
      return keyById(client, keyId);
    });
  }

  async setKeyStatus(keyId: string, status: KeyStatus, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return this.changeKey(keyId, record, async (client, before) => {
      await client.query(`UPDATE keys SET status = $2 WHERE id = $1 AND status <> 'revoked'`, [keyId, status]);
      const after = await keyById(client, keyId);
      if (after && before?.status !== 'revoked' && after.status === 'revoked')
        await recordEvent(client, 'key.revoked', holderOf(after), { balance: after.balance });
      return after;
    });
  }

  debit(keyHash: string, endpoint: string, options: DebitOptions = {}): Promise<DebitResult> {
    return this.debits.submit(keyHash, endpoint, options);
  }

  async capSpend(holderId: string, caps: SpendCap[], now: number): Promise<Array<{ cap: SpendCap; spent: number; resetsAt: string }>> {
    const { table, column } = SPEND_TABLES[holderId.startsWith('acct_') ? 'account' : 'key'];
    const periods = capPeriods(caps, now);
    const { rows } = await this.db.query<{ interval: string; period_start: Date; spent: number }>(
      `SELECT interval, period_start, spent FROM ${table} WHERE ${column} = $1 AND period_start = ANY($2::timestamptz[])`,
      [holderId, periods.map((period) => period.start)],
    );
    return periods.map((period) => {
      const row = rows.find((candidate) => candidate.interval === period.cap.interval && candidate.period_start.toISOString() === period.start);
      return { cap: period.cap, spent: Number(row?.spent ?? 0), resetsAt: period.end };
    });
  }

  debitCapped(keyId: string, endpoint: string, options: DebitOptions, now: number): Promise<DebitResult> {
    return this.cappedDebits.submit(keyId, endpoint, { ...options, at: now });
  }

  async updateKeySettings(keyId: string, settings: KeySettings, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    refuseUnstorable({ name: settings.name, metadata: settings.metadata });
    return this.changeKey(keyId, record, async (client, key) => {
      if (!key) return undefined;
      await client.query(
        `UPDATE keys SET expires_at = CASE WHEN $2 THEN $3::timestamptz ELSE expires_at END,
         expiry_announced = CASE WHEN $2 THEN false ELSE expiry_announced END,
         metadata = CASE WHEN $4 THEN $5::jsonb ELSE metadata END,
         spend_caps = CASE WHEN $6 THEN $7::jsonb ELSE spend_caps END,
         name = CASE WHEN $8 THEN $9 ELSE name END WHERE id = $1`,
        [
          keyId,
          settings.expiresAt !== undefined,
          settings.expiresAt ?? null,
          settings.metadata !== undefined,
          json(settings.metadata),
          settings.spendCaps !== undefined,
          json(settings.spendCaps),
          settings.name !== undefined,
          settings.name ?? null,
        ],
      );
      if (settings.spendCaps !== undefined) await recountCaps(client, 'key', keyId, settings.spendCaps, Date.now());
      await updateAccountRow(client, key.accountId, { prices: settings.prices, lowBalanceThreshold: settings.lowBalanceThreshold });
      return keyById(client, keyId);
    });
  }

  recordOutcome(chargeId: number, status: number): void {
    this.outcomes.record(chargeId, status);
  }

  async listCharges(keyId: string, limit = 100, beforeId = Number.MAX_SAFE_INTEGER): Promise<ChargeRecord[]> {
    const { rows } = await this.db.query<{ id: number; key_id: string; endpoint: string; at: Date; outcome_status: number | null; credits: number }>(
      `SELECT id, key_id, endpoint, at, COALESCE(outcome_status, charge_outcome(id)) AS outcome_status, credits
       FROM charges WHERE key_id = $1 AND id < $3 ORDER BY id DESC LIMIT $2`,
      [keyId, limit, beforeId],
    );
    return rows.map((row) => ({
      id: row.id,
      keyId: row.key_id,
      endpoint: row.endpoint,
      at: row.at.toISOString(),
      outcomeStatus: row.outcome_status,
      credits: row.credits,
    }));
  }

  async countCharges(keyId: string): Promise<number> {
    return (await this.db.one<{ n: number }>('SELECT count(*) AS n FROM charges WHERE key_id = $1', [keyId])).n;
  }

  async listGrants(accountId: string): Promise<CreditGrant[]> {
    const { rows } = await this.db.query<{ account_id: string; amount: number; reason: CreditGrant['reason']; at: Date; expires_at: Date | null }>(
      'SELECT account_id, amount, reason, at, expires_at FROM credit_grants WHERE account_id = $1 ORDER BY id',
      [accountId],
    );
    return rows.map((row) => ({
      accountId: row.account_id,
      amount: Number(row.amount),
      reason: row.reason,
      at: row.at.toISOString(),
      expiresAt: row.expires_at?.toISOString() ?? null,
    }));
  }

  async auditIdempotentCharges(): Promise<Array<{ ref: string; charges: number }>> {
    const sql =
      'SELECT idempotency_ref AS ref, count(*)::integer AS charges FROM charges WHERE idempotency_ref IS NOT NULL GROUP BY idempotency_ref HAVING count(*) > 1';
    return (await this.db.query<{ ref: string; charges: number }>(sql)).rows;
  }

  async auditLedger(): Promise<LedgerAudit[]> {
    // One statement: one snapshot, so charges and balances are read as of the same moment.
    const { rows } = await this.db.query<{
      account_id: string;
      balance: number;
      granted: number;
      charged: number;
      expired: number;
      consistent: boolean;
    }>(
      `SELECT account_id, balance, granted::bigint, charged, expired::bigint,
         granted - charged - expired = balance AND balance >= 0 AS consistent FROM (
         SELECT a.id AS account_id, a.balance,
           (SELECT coalesce(sum(g.amount), 0) FROM credit_grants g WHERE g.account_id = a.id) AS granted,
           (SELECT coalesce(sum(c.credits), 0) FROM charges c JOIN keys k ON k.id = c.key_id WHERE k.account_id = a.id) AS charged,
           (SELECT coalesce(sum(e.amount), 0) FROM credit_expiries e WHERE e.account_id = a.id) AS expired
         FROM accounts a) AS ledger ORDER BY account_id`,
    );
    return rows.map((row) => ({
      accountId: row.account_id,
      granted: Number(row.granted),
      charged: Number(row.charged),
      expired: Number(row.expired),
      balance: Number(row.balance),
      consistent: row.consistent,
    }));
  }

  /**
   * A batch of capped debits: per key one transaction holding its row and its account's, its and
   * its account's caps' periods read once, its debits decided in order (spend-caps.ts,
   * decideCapped), and the balance, charges, periods' spend and events written together.
   */
  private async runCappedDebits(jobs: DebitJob[]): Promise<DebitResult[]> {
    const results = new Array<DebitResult>(jobs.length);
    for (const [keyId, indexes] of positionsByKey(jobs)) {
      const batch = indexes.map((index) => jobs[index] as DebitJob);
      const decided = await this.changeKey(keyId, undefined, (client, key) => debitCappedKey(client, key, batch, this.lowBalanceThreshold));
      decided.forEach((result, position) => {
        results[indexes[position] as number] = result;
      });
    }
    return results;
  }

  /**
   * A change to one key in a transaction holding the key's row lock and its account's, with its
   * record (audit entry, completed claim): all of it commits, or none.
   */
  private changeKey<T>(
    keyId: string,
    record: ChangeRecord<T> | undefined,
    change: (client: PoolClient, key: KeyRecord | undefined) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (client) => {
      const result = await change(client, await lockedKey(client, keyId));
      await writeChange(client, record, result);
      return result;
    });
  }

  /** A change to one account in a transaction holding its row lock, with its record: all of it commits, or none. */
  private changeAccount<T>(
    accountId: string,
    record: ChangeRecord<T> | undefined,
    change: (client: PoolClient, account: AccountRecord | undefined) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (client) => {
      const result = await change(client, await accountById(client, accountId, 'FOR UPDATE'));
      await writeChange(client, record, result);
      return result;
    });
  }

  /** Writes every debit and outcome still pending. The pool itself belongs to the store. */
  async close(): Promise<void> {
    await this.debits.drain();
    await this.cappedDebits.drain();
    await this.outcomes.close();
  }

  /**
   * A batch of one key's debits in one statement (debit_one_key): one conditional UPDATE of its
   * account taking what the balance covers, the charges of the requests it covered (the first
   * ones, in order), and why it took nothing. A batch of several keys goes to debit_batch, which
   * groups the debits by account, since keys of one account share its balance.
   */
  private async runDebits(jobs: DebitJob[]): Promise<DebitResult[]> {
    const positions = positionsByKey(jobs);
    if (positions.size > 1) return this.runMixedDebits(jobs);
    const totals = runningTotals(jobs);
    const costs = jobs.map((job) => job.cost);
    const uniformCost = costs.every((cost) => cost === costs[0]) ? costs[0] : null;
    const { rows } = await this.db.query<DebitedRow>(
      'SELECT key_hash, balance, granted, status, charge_ids FROM debit_one_key($1, $2, $3, $4, $5, $6, $7)',
      [
        jobs[0]?.keyHash,
        jobs.map((job) => job.endpoint),
        costs,
        totals,
        jobs.map((job) => job.idempotencyRef),
        this.lowBalanceThreshold,
        uniformCost,
      ],
      'debit-one-key',
    );
    const row = rows[0] as DebitedRow;
    const granted = row.granted ?? 0;
    // Charge ids come from one sequence in the order of the requests, which ORDER BY position fixes.
    const before = Number(row.balance) + (granted > 0 ? (totals[granted - 1] as number) : 0);
    const refusal = refusalFor(granted > 0 ? 'active' : (row.status ?? undefined));
    return jobs.map((_, index) =>
      index < granted ? { outcome: 'charged', balance: before - (totals[index] as number), chargeId: Number(row.charge_ids?.[index]) } : refusal,
    );
  }

  private async runMixedDebits(jobs: DebitJob[]): Promise<DebitResult[]> {
    const { rows } = await this.db.query<{ charge_id: string | null; balance: string | null; status: KeyStatus | null }>(
      'SELECT charge_id, balance, status FROM debit_batch($1, $2, $3, $4, $5)',
      [
        jobs.map((job) => job.keyHash),
        jobs.map((job) => job.endpoint),
        jobs.map((job) => job.cost),
        jobs.map((job) => job.idempotencyRef),
        this.lowBalanceThreshold,
      ],
      'debit-batch',
    );
    return rows.map((row) =>
      row.charge_id !== null
        ? { outcome: 'charged', balance: Number(row.balance), chargeId: Number(row.charge_id) }
        : refusalFor(row.status ?? undefined),
    );
  }
}

async function writeChange<T>(client: PoolClient, record: ChangeRecord<T> | undefined, result: T): Promise<void> {
  const { audit, completion } = changeWrites(record, result);
  if (audit) await insertAudit(client, audit);
  if (completion) await completeClaim(client, completion.entry, completion.response);
}

async function grantedBefore(client: PoolClient, idempotencyRef: string): Promise<boolean> {
  return ((await client.query('SELECT 1 FROM credit_grants WHERE idempotency_ref = $1', [idempotencyRef])).rowCount ?? 0) > 0;
}

/** Sets what is given of an account's settings; absent ones stay. */
async function updateAccountRow(client: PoolClient, accountId: string, settings: AccountSettings): Promise<void> {
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

/** Each debit's cost added up with those before it in the batch (one key's). */
function runningTotals(jobs: DebitJob[]): number[] {
  let total = 0;
  return jobs.map((job) => {
    total += job.cost;
    return total;
  });
}
