import type { PostgresDatabase } from '../platform/postgres-database.js';
import { refuseUnstorable } from '../platform/store-faults.js';
import {
  type AccountCreation,
  type AccountQuery,
  type AccountRecord,
  type AccountSettings,
  type AccountTopUpResult,
  type AccountUpdate,
  type AccountUsageRow,
  holderOf,
  type NewAccount,
  ownAccountId,
} from './accounts.js';
import { DebitBatcher, type DebitJob, positionsByKey } from './debit-batcher.js';
import type {
  AccountRefillChange,
  ChangeRecord,
  ChargeRecord,
  CreditGrant,
  DebitOptions,
  DebitResult,
  ExpiringCredits,
  Expiry,
  GrantOptions,
  KeyActivity,
  KeyEnd,
  KeyQuery,
  KeyRecord,
  KeySettings,
  KeyStatus,
  Ledger,
  LedgerAudit,
  NewKey,
  RefillChange,
  RetiredKey,
  RollResult,
  TopUpResult,
  UsageQuery,
  UsageRow,
} from './ledger.js';
import { KEY_COLUMNS, KEYS_WITH_ACCOUNTS, type KeyRow, keyCursorPlace, keyFromRow, keyPage } from './ledger-rows.js';
import { topUpRefusal } from './ledger-rules.js';
import { OutcomeWriter } from './outcome-writer.js';
import { PostgresAccounts } from './postgres-accounts.js';
import { debitCappedKey, recountCaps, SPEND_TABLES } from './postgres-capped-debits.js';
import { applyRefill, expireGrant, expiringCredits, grant, recordEvent, refillRule, setRefill } from './postgres-credits.js';
import { debitBatch } from './postgres-debit-batches.js';
import { changeAccount, changeKey, grantedBefore, json, keyById, keyOf, updateAccountRow, writeChange } from './postgres-ledger-changes.js';
import { PostgresLedgerReports } from './postgres-ledger-reports.js';
import type { Refill, RefillPlan, RefillRule } from './refills.js';
import { capPeriods, type SpendCap } from './spend-caps.js';

/**
 * The ledger in PostgreSQL, shared by every instance. Debits follow the embedded ledger's design
 * (per account and batch, one conditional UPDATE taking what the balance covers) in one stored
 * function per batch, so a batch is one round trip and holds no row lock across the network.
 */
export class PostgresLedger implements Ledger {
  private readonly reports: PostgresLedgerReports;
  private readonly accounts: PostgresAccounts;
  private readonly debits = new DebitBatcher((jobs) => debitBatch(this.db, jobs, this.lowBalanceThreshold));
  /** Debits of keys with spend caps (their own or their account's), by key id, batched as the others: a burst past a cap takes the account's row lock once per batch. */
  private readonly cappedDebits = new DebitBatcher((jobs) => this.runCappedDebits(jobs));
  private readonly outcomes = new OutcomeWriter(async (outcomes) => {
    await this.db.query('SELECT record_outcomes($1, $2)', [outcomes.map(([id]) => id), outcomes.map(([, status]) => status)]);
  });

  /** `lowBalanceThreshold`: LOW_BALANCE_THRESHOLD, the mark of accounts that have none of their own. */
  constructor(
    private readonly db: PostgresDatabase,
    private readonly lowBalanceThreshold: number | null = null,
  ) {
    this.reports = new PostgresLedgerReports(db);
    this.accounts = new PostgresAccounts(db);
  }

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

  createAccount(input: NewAccount, record?: ChangeRecord<AccountCreation>): Promise<AccountCreation> {
    return this.accounts.createAccount(input, record);
  }

  findAccount(id: string): Promise<AccountRecord | undefined> {
    return this.accounts.findAccount(id);
  }

  listAccountsPage(query: AccountQuery): Promise<{ accounts: AccountRecord[]; nextCursor: string | null }> {
    return this.accounts.listAccountsPage(query);
  }

  accountKeys(accountId: string): Promise<KeyRecord[]> {
    return this.accounts.accountKeys(accountId);
  }

  updateAccount(accountId: string, settings: AccountSettings, record?: ChangeRecord<AccountUpdate>): Promise<AccountUpdate> {
    return this.accounts.updateAccount(accountId, settings, record);
  }

  topUpAccount(
    accountId: string,
    amount: number,
    options: GrantOptions = {},
    record?: ChangeRecord<AccountTopUpResult>,
  ): Promise<AccountTopUpResult> {
    return this.accounts.topUpAccount(accountId, amount, options, record);
  }

  setAccountRefill(
    accountId: string,
    plan: RefillPlan | null,
    now: string,
    record?: ChangeRecord<AccountRefillChange>,
  ): Promise<AccountRefillChange> {
    return this.accounts.setAccountRefill(accountId, plan, now, record);
  }

  accountCharges(accountId: string, limit: number): Promise<ChargeRecord[]> {
    return this.reports.accountCharges(accountId, limit);
  }

  accountUsage(accountId: string, from: string, to: string): Promise<AccountUsageRow[]> {
    return this.reports.accountUsage(accountId, from, to);
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

  keyActivity(keyId: string): Promise<KeyActivity> {
    return this.reports.keyActivity(keyId);
  }

  usage(query: UsageQuery): Promise<UsageRow[]> {
    return this.reports.usage(query);
  }

  topSpenders(from: string, to: string, limit: number): Promise<Array<{ keyId: string; name: string; charges: number; credits: number }>> {
    return this.reports.topSpenders(from, to, limit);
  }

  async findKeyById(id: string): Promise<KeyRecord | undefined> {
    return keyById(this.db, id);
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} ORDER BY k.created_at, k.id`)).rows.map(keyFromRow);
  }

  async topUp(keyId: string, amount: number, options: GrantOptions = {}, record?: ChangeRecord<TopUpResult>): Promise<TopUpResult> {
    return changeKey(this.db, keyId, record, async (client, key): Promise<TopUpResult> => {
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
      const expiry = await changeAccount(this.db, due.account_id, undefined, (client) => expireGrant(client, due.id, due.account_id));
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
    return changeKey(this.db, keyId, record, async (client, key): Promise<RefillChange> => {
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
      const refill = await changeAccount(this.db, accountId, undefined, (client) => applyRefill(client, accountId, now));
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
      const end = await changeKey(this.db, id, undefined, async (client, key) => {
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
    return changeKey(this.db, keyId, record, async (client, key): Promise<RollResult> => {
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
    return changeKey(this.db, keyId, record, async (client) => {
      await client.query('UPDATE keys SET rate_limit = $2 WHERE id = $1', [keyId, rateLimit]);
      return keyById(client, keyId);
    });
  }

  async setKeyStatus(keyId: string, status: KeyStatus, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return changeKey(this.db, keyId, record, async (client, before) => {
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
    return changeKey(this.db, keyId, record, async (client, key) => {
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

  listCharges(keyId: string, limit = 100, beforeId = Number.MAX_SAFE_INTEGER): Promise<ChargeRecord[]> {
    return this.reports.listCharges(keyId, limit, beforeId);
  }

  countCharges(keyId: string): Promise<number> {
    return this.reports.countCharges(keyId);
  }

  listGrants(accountId: string): Promise<CreditGrant[]> {
    return this.reports.listGrants(accountId);
  }

  auditIdempotentCharges(): Promise<Array<{ ref: string; charges: number }>> {
    return this.reports.auditIdempotentCharges();
  }

  auditLedger(): Promise<LedgerAudit[]> {
    return this.reports.auditLedger();
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
      const decided = await changeKey(this.db, keyId, undefined, (client, key) => debitCappedKey(client, key, batch, this.lowBalanceThreshold));
      decided.forEach((result, position) => {
        results[indexes[position] as number] = result;
      });
    }
    return results;
  }

  /** Writes every debit and outcome still pending. The pool itself belongs to the store. */
  async close(): Promise<void> {
    await this.debits.drain();
    await this.cappedDebits.drain();
    await this.outcomes.close();
  }
}
