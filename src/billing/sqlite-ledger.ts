import { basename, dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { ExternalWrites } from '../platform/external-writes.js';
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
import { type KeyRow, keyCursorPlace, keyFromRow, keyPage } from './ledger-rows.js';
import { topUpRefusal } from './ledger-rules.js';
import { OutcomeWriter } from './outcome-writer.js';
import type { Refill, RefillPlan, RefillRule } from './refills.js';
import { capPeriods, type SpendCap } from './spend-caps.js';
import { SqliteAccounts } from './sqlite-accounts.js';
import { debitCappedKey, recountCaps } from './sqlite-capped-debits.js';
import { SqliteCredits } from './sqlite-credits.js';
import { SqliteDebitBatches } from './sqlite-debit-batches.js';
import { SqliteLedgerChanges } from './sqlite-ledger-changes.js';
import { SqliteLedgerReports } from './sqlite-ledger-reports.js';
import { json, prepareStatements, setting } from './sqlite-ledger-statements.js';

const KEY_CACHE_LIMIT = 100_000;

/**
 * The embedded ledger on its own SQLite file. Debits go through the shared DebitBatcher; each batch
 * is one immediate transaction that also writes the pending outcomes, so under load outcomes cost
 * no commit of their own.
 */
export class SqliteLedger implements Ledger {
  private readonly sql;
  /**
   * Keys by hash, as last read or written through this connection, and their accounts' balances
   * (every key of an account shows the one balance); dropped whenever another connection (the CLI,
   * another worker) has committed to the ledger.
   */
  private readonly keyCache = new Map<string, KeyRecord>();
  private readonly cachedBalances = new Map<string, number>();
  private readonly externalWrites: ExternalWrites;
  private readonly debits = new DebitBatcher((jobs) => this.runDebits(jobs));
  /** Debits of keys with spend caps (their own or their account's), by key id, batched as the others: one transaction decides a batch. */
  private readonly cappedDebits = new DebitBatcher((jobs) => this.runCappedDebits(jobs));
  private readonly credits: SqliteCredits;
  private readonly batches: SqliteDebitBatches;
  private readonly reports: SqliteLedgerReports;
  private readonly outcomes = new OutcomeWriter((outcomes) => this.changes.inTransaction(() => this.batches.writeOutcomes(outcomes)));
  private readonly changes: SqliteLedgerChanges;
  private readonly accounts: SqliteAccounts;

  /** `lowBalanceThreshold`: LOW_BALANCE_THRESHOLD, the mark of accounts that have none of their own. */
  constructor(
    private readonly db: Database.Database,
    lowBalanceThreshold: number | null = null,
  ) {
    this.sql = prepareStatements(db);
    this.changes = new SqliteLedgerChanges(db, this.sql, () => this.dropCache());
    this.credits = new SqliteCredits(db, lowBalanceThreshold);
    this.accounts = new SqliteAccounts(this.sql, this.changes, this.credits);
    this.batches = new SqliteDebitBatches(db, this.sql, this.credits, (accountId, balance) => {
      if (this.cachedBalances.has(accountId)) this.cachedBalances.set(accountId, balance);
    });
    this.reports = new SqliteLedgerReports(db);
    this.externalWrites = new ExternalWrites(db, dirname(db.name), basename(db.name));
  }

  async createKey(input: NewKey, record?: ChangeRecord<KeyRecord>): Promise<KeyRecord> {
    refuseUnstorable({ name: input.name, metadata: input.metadata, account: input.account });
    const createdAt = new Date().toISOString();
    return this.changes.write(record, () => {
      const joining = input.account && 'accountId' in input.account ? input.account.accountId : undefined;
      const accountId = joining ?? ownAccountId(input.id);
      if (!joining) {
        this.sql.insertAccount.run(accountId, input.name, null, null, input.credits, null, createdAt);
        this.sql.insertCreateGrant.run(accountId, input.credits, createdAt);
      }
      this.sql.insertKey.run(
        input.id,
        accountId,
        input.keyHash,
        input.name,
        'active',
        createdAt,
        input.rateLimit ?? null,
        input.expiresAt ?? null,
        json(input.metadata),
        json(input.spendCaps),
      );
      if (joining && input.credits > 0) this.credits.grant({ accountId, keyId: input.id }, input.credits, 'create');
      return this.changes.keyBy(this.sql.keyById, input.id) as KeyRecord;
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
    if (this.externalWrites.happened()) this.dropCache();
    const cached = this.keyCache.get(keyHash);
    if (cached) {
      const balance = this.cachedBalances.get(cached.accountId);
      return balance === undefined || balance === cached.balance ? cached : { ...cached, balance };
    }
    const key = this.changes.keyBy(this.sql.keyByHash, keyHash);
    if (key) {
      if (this.keyCache.size >= KEY_CACHE_LIMIT) this.dropCache();
      this.keyCache.set(keyHash, key);
      this.cachedBalances.set(key.accountId, key.balance);
    }
    return key;
  }

  async listKeysPage(query: KeyQuery): Promise<{ keys: KeyRecord[]; nextCursor: string | null }> {
    const after = query.cursor === null ? undefined : keyCursorPlace(query.cursor);
    const rows = this.sql.keysPage.all({
      status: query.status ?? null,
      name: query.name ?? null,
      accountId: query.accountId ?? null,
      nameContains: query.nameContains ?? null,
      maxBalance: query.maxBalance ?? null,
      afterAt: after?.createdAt ?? null,
      afterId: after?.id ?? '',
      limit: query.limit + 1,
    }) as KeyRow[];
    return keyPage(rows.map(keyFromRow), query.limit);
  }

  async findKeyById(id: string): Promise<KeyRecord | undefined> {
    return this.changes.keyBy(this.sql.keyById, id);
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (this.sql.allKeys.all() as KeyRow[]).map(keyFromRow);
  }

  async topUp(keyId: string, amount: number, options: GrantOptions = {}, record?: ChangeRecord<TopUpResult>): Promise<TopUpResult> {
    return this.changes.changeKey(keyId, record, (key): TopUpResult => {
      if (key && options.idempotencyRef !== undefined && this.credits.grantedBefore(options.idempotencyRef))
        return { outcome: 'granted-before', key };
      const refusal = topUpRefusal(key, amount);
      if (refusal) return refusal;
      this.credits.grant(holderOf(key as KeyRecord), amount, 'topup', options);
      return { outcome: 'topped-up', key: this.changes.keyBy(this.sql.keyById, keyId) as KeyRecord };
    });
  }

  async expireDue(now: string, limit: number): Promise<Expiry[]> {
    const expiries: Expiry[] = [];
    for (const grant of this.credits.dueGrants(now, limit)) {
      const expiry = await this.changes.changeAccount(grant.account_id, undefined, () => this.credits.expireGrant(grant.id, grant.account_id));
      if (expiry) expiries.push(expiry);
    }
    return expiries;
  }

  async expiringCredits(accountId: string): Promise<ExpiringCredits[]> {
    return this.db.transaction(() => this.credits.expiringCredits(accountId))();
  }

  async refillRule(accountId: string): Promise<RefillRule | null> {
    return this.credits.refillRule(accountId);
  }

  async setRefill(keyId: string, plan: RefillPlan | null, now: string, record?: ChangeRecord<RefillChange>): Promise<RefillChange> {
    return this.changes.changeKey(keyId, record, (key): RefillChange => {
      if (!key) return { outcome: 'not-found' };
      if (key.status === 'revoked' && plan !== null) return { outcome: 'revoked', key };
      const change = this.credits.setRefill(key.accountId, plan, now);
      return { outcome: 'set', ...change, balance: change.refill?.balance ?? key.balance };
    });
  }

  async refillDue(now: string, limit: number): Promise<Refill[]> {
    const refills: Refill[] = [];
    for (const accountId of this.credits.dueRefills(now, limit)) {
      const refill = await this.changes.changeAccount(accountId, undefined, () => this.credits.refill(accountId, now));
      if (refill) refills.push(refill);
    }
    return refills;
  }

  async announceExpiredKeys(now: string, limit: number): Promise<KeyEnd[]> {
    const ends: KeyEnd[] = [];
    for (const { id } of this.sql.endedKeys.all(now, limit) as Array<{ id: string }>) {
      const end = await this.changes.changeKey(id, undefined, (key) => {
        const row = this.sql.announceEnd.get(id, now) as { expires_at: string } | undefined;
        if (!row || !key) return undefined;
        this.credits.recordEvent('key.expired', holderOf(key), { balance: key.balance, expired_at: row.expires_at });
        return { keyId: id, expiredAt: row.expires_at };
      });
      if (end) ends.push(end);
    }
    return ends;
  }

  async findRetiredKey(keyHash: string): Promise<RetiredKey | undefined> {
    const row = this.sql.retiredKey.get(keyHash) as (KeyRow & { current_hash: string; valid_until: string }) | undefined;
    return row && { key: keyFromRow(row), keyHash: row.current_hash, validUntil: row.valid_until };
  }

  async rollKey(
    keyId: string,
    newKeyHash: string,
    oldKeyValidUntil: string | null,
    now: string,
    record?: ChangeRecord<RollResult>,
  ): Promise<RollResult> {
    return this.changes.changeKey(keyId, record, (key): RollResult => {
      if (!key) return { outcome: 'not-found' };
      if (key.status === 'revoked') return { outcome: 'revoked', key };
      this.sql.forgetRetired.run(keyId, now);
      if (oldKeyValidUntil !== null) this.sql.retireHash.run(oldKeyValidUntil, keyId);
      this.sql.setHash.run(newKeyHash, keyId);
      this.credits.recordEvent('key.rolled', holderOf(key), { balance: key.balance, old_key_valid_until: oldKeyValidUntil });
      return { outcome: 'rolled', key };
    });
  }

  async setKeyRateLimit(keyId: string, rateLimit: number | null, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return this.changes.changeKey(keyId, record, () => {
      this.sql.setRateLimit.run(rateLimit, keyId);
      return this.changes.keyBy(this.sql.keyById, keyId);
    });
  }

  async setKeyStatus(keyId: string, status: KeyStatus, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return this.changes.changeKey(keyId, record, (before) => {
      this.sql.setStatus.run(status, keyId);
      const after = this.changes.keyBy(this.sql.keyById, keyId);
      if (after && before?.status !== 'revoked' && after.status === 'revoked')
        this.credits.recordEvent('key.revoked', holderOf(after), { balance: after.balance });
      return after;
    });
  }

  debit(keyHash: string, endpoint: string, options: DebitOptions = {}): Promise<DebitResult> {
    return this.debits.submit(keyHash, endpoint, options);
  }

  async capSpend(holderId: string, caps: SpendCap[], now: number): Promise<Array<{ cap: SpendCap; spent: number; resetsAt: string }>> {
    const { periodSpend } = this.sql.spends[holderId.startsWith('acct_') ? 'account' : 'key'];
    return capPeriods(caps, now).map((period) => {
      const row = periodSpend.get(holderId, period.cap.interval, period.start) as { spent: number } | undefined;
      return { cap: period.cap, spent: row?.spent ?? 0, resetsAt: period.end };
    });
  }

  debitCapped(keyId: string, endpoint: string, options: DebitOptions, now: number): Promise<DebitResult> {
    return this.cappedDebits.submit(keyId, endpoint, { ...options, at: now });
  }

  async updateKeySettings(keyId: string, settings: KeySettings, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    refuseUnstorable({ name: settings.name, metadata: settings.metadata });
    return this.changes.changeKey(keyId, record, (key) => {
      if (!key) return undefined;
      this.sql.updateSettings.run({
        keyId,
        ...setting('Name', 'name', settings.name),
        ...setting('Expiry', 'expiresAt', settings.expiresAt),
        ...setting('Metadata', 'metadata', settings.metadata === undefined ? undefined : json(settings.metadata)),
        ...setting('Caps', 'caps', settings.spendCaps === undefined ? undefined : json(settings.spendCaps)),
      });
      if (settings.spendCaps !== undefined) recountCaps(this.sql, 'key', keyId, settings.spendCaps, Date.now());
      if (settings.prices !== undefined || settings.lowBalanceThreshold !== undefined) {
        this.sql.updateAccount.run({
          accountId: key.accountId,
          ...setting('Name', 'name', undefined),
          ...setting('ExternalId', 'externalId', undefined),
          ...setting('Metadata', 'metadata', undefined),
          ...setting('Prices', 'prices', settings.prices === undefined ? undefined : json(settings.prices)),
          ...setting('Threshold', 'threshold', settings.lowBalanceThreshold),
          ...setting('Caps', 'caps', undefined),
        });
      }
      return this.changes.keyBy(this.sql.keyById, keyId);
    });
  }

  recordOutcome(chargeId: number, status: number): void {
    this.outcomes.record(chargeId, status);
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

  listCharges(keyId: string, limit?: number, beforeId?: number): Promise<ChargeRecord[]> {
    return this.reports.listCharges(keyId, limit, beforeId);
  }

  countCharges(keyId: string): Promise<number> {
    return this.reports.countCharges(keyId);
  }

  listGrants(keyId: string): Promise<CreditGrant[]> {
    return this.reports.listGrants(keyId);
  }

  auditLedger(): Promise<LedgerAudit[]> {
    return this.reports.auditLedger();
  }

  auditIdempotentCharges(): Promise<Array<{ ref: string; charges: number }>> {
    return this.reports.auditIdempotentCharges();
  }

  /** Writes every debit and outcome still pending. The connection itself belongs to the store. */
  async close(): Promise<void> {
    this.externalWrites.close();
    await this.debits.drain();
    await this.cappedDebits.drain();
    await this.outcomes.close();
  }

  private dropCache(): void {
    this.keyCache.clear();
    this.cachedBalances.clear();
  }

  /**
   * One transaction for the whole batch, and per account one conditional statement (per run of equal
   * costs): it takes MIN(balance / cost, n) debits of the account's n in the batch, whichever keys
   * made them, and records in last_debit how many it took (SET expressions read the row as it was),
   * so the balance can never go negative and exactly that many requests are charged. The charges
   * are appended in multi-row inserts.
   */
  private runDebits(jobs: DebitJob[]): DebitResult[] {
    const pendingOutcomes = this.outcomes.take();
    try {
      return this.changes.inTransaction(() => {
        this.batches.writeOutcomes(pendingOutcomes);
        return this.batches.debit(jobs);
      });
    } catch (error) {
      this.outcomes.giveBack(pendingOutcomes);
      this.dropCache();
      throw error;
    }
  }

  /**
   * A batch of capped debits in one immediate transaction: per key, its caps' and its account's
   * caps' periods read once, then its debits decided in order (spend-caps.ts, decideCapped), the
   * balance, charges, periods' spend and events written together.
   */
  private runCappedDebits(jobs: DebitJob[]): DebitResult[] {
    const results = new Array<DebitResult>(jobs.length);
    this.dropCache();
    this.changes.inTransaction(() => {
      for (const [keyId, indexes] of positionsByKey(jobs)) {
        const batch = indexes.map((index) => jobs[index] as DebitJob);
        const decided = debitCappedKey(this.sql, this.credits, this.changes.keyBy(this.sql.keyById, keyId), batch);
        decided.forEach((result, position) => {
          results[indexes[position] as number] = result;
        });
      }
    });
    return results;
  }
}
