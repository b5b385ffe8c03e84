import { basename, dirname } from 'node:path';
import type Database from 'better-sqlite3';
import type { NewAuditEntry } from '../admin/admin-store.js';
import { prepareAuditInsert } from '../admin/sqlite-admin-store.js';
import type { IdempotencyEntry, StoredResponse } from '../idempotency/idempotency-store.js';
import { prepareCompletion } from '../idempotency/sqlite-idempotency.js';
import { ExternalWrites } from '../platform/external-writes.js';
import { DebitBatcher, type DebitJob, positionsByKey } from './debit-batcher.js';
import { capEventData } from './events.js';
import {
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
import { type ChargeOutcome, OutcomeWriter } from './outcome-writer.js';
import type { Refill, RefillPlan, RefillRule } from './refills.js';
import { capPeriods, decideCapped, type SpendCap } from './spend-caps.js';
import { SqliteCredits } from './sqlite-credits.js';
import { SqliteLedgerReports } from './sqlite-ledger-reports.js';

const KEY_CACHE_LIMIT = 100_000;
const MULTI_ROW_CHUNK = 64;

interface DebitedRow {
  id: string;
  balance: number;
  last_debit: number;
  low_balance_threshold: number | null;
}

function prepareStatements(db: Database.Database) {
  return {
    insertKey: db.prepare(
      `INSERT INTO keys (id, key_hash, name, status, balance, created_at, rate_limit, expires_at, metadata, spend_caps)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    periodSpend: db.prepare('SELECT spent, cap_reached_sent FROM key_spend WHERE key_id = ? AND interval = ? AND period_start = ?'),
    addSpend: db.prepare(
      `INSERT INTO key_spend (key_id, interval, period_start, spent) VALUES (?, ?, ?, ?)
       ON CONFLICT (key_id, interval, period_start) DO UPDATE SET spent = spent + excluded.spent`,
    ),
    capReachedSent: db.prepare(
      `INSERT INTO key_spend (key_id, interval, period_start, spent, cap_reached_sent) VALUES (?, ?, ?, 0, 1)
       ON CONFLICT (key_id, interval, period_start) DO UPDATE SET cap_reached_sent = 1`,
    ),
    spendOne: db.prepare('UPDATE keys SET balance = balance - ? WHERE id = ? AND balance >= ? RETURNING balance'),
    insertCharge: db.prepare('INSERT INTO charges (key_id, endpoint, at, idempotency_ref, credits) VALUES (?, ?, ?, ?, ?)'),
    endedKeys: db.prepare('SELECT id FROM keys WHERE expires_at <= ? AND expiry_announced = 0 ORDER BY expires_at LIMIT ?'),
    announceEnd: db.prepare(
      'UPDATE keys SET expiry_announced = 1 WHERE id = ? AND expiry_announced = 0 AND expires_at <= ? RETURNING balance, expires_at',
    ),
    insertCreateGrant: db.prepare(`INSERT INTO credit_grants (key_id, amount, reason, at) VALUES (?, ?, 'create', ?)`),
    retiredKey: db.prepare(
      'SELECT k.*, k.key_hash AS current_hash, r.valid_until FROM retired_keys r JOIN keys k ON k.id = r.key_id WHERE r.key_hash = ?',
    ),
    forgetRetired: db.prepare('DELETE FROM retired_keys WHERE key_id = ? AND valid_until <= ?'),
    retireHash: db.prepare('INSERT INTO retired_keys (key_hash, key_id, valid_until) SELECT key_hash, id, ? FROM keys WHERE id = ?'),
    setHash: db.prepare('UPDATE keys SET key_hash = ? WHERE id = ?'),
    keyByHash: db.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE key_hash = ?`),
    keyById: db.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = ?`),
    allKeys: db.prepare(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, id`),
    setStatus: db.prepare(`UPDATE keys SET status = ? WHERE id = ? AND status <> 'revoked'`),
    setRateLimit: db.prepare('UPDATE keys SET rate_limit = ? WHERE id = ?'),
    // `count` requests of `cost` credits each: as many as the balance covers, whole.
    debit: db.prepare(
      `UPDATE keys SET balance = balance - MIN(balance / @cost, @count) * @cost, last_debit = MIN(balance / @cost, @count)
       WHERE key_hash = @keyHash AND status = 'active' AND balance >= @cost RETURNING id, balance, last_debit, low_balance_threshold`,
    ),
    updateSettings: db.prepare(
      `UPDATE keys SET prices = CASE WHEN @setPrices THEN @prices ELSE prices END,
         low_balance_threshold = CASE WHEN @setThreshold THEN @threshold ELSE low_balance_threshold END,
         expires_at = CASE WHEN @setExpiry THEN @expiresAt ELSE expires_at END,
         expiry_announced = CASE WHEN @setExpiry THEN 0 ELSE expiry_announced END,
         metadata = CASE WHEN @setMetadata THEN @metadata ELSE metadata END,
         spend_caps = CASE WHEN @setCaps THEN @caps ELSE spend_caps END WHERE id = @keyId`,
    ),
    keysPage: db.prepare(
      `SELECT ${KEY_COLUMNS} FROM keys
       WHERE (@status IS NULL OR status = @status) AND (@name IS NULL OR name = @name)
         AND (@nameContains IS NULL OR instr(lower(name), lower(@nameContains)) > 0)
         AND (@maxBalance IS NULL OR balance <= @maxBalance)
         AND (@afterAt IS NULL OR (created_at, id) < (@afterAt, @afterId))
       ORDER BY created_at DESC, id DESC LIMIT @limit`,
    ),
  };
}

/**
 * The embedded ledger on its own SQLite file. Debits go through the shared DebitBatcher; each batch
 * is one immediate transaction that also writes the pending outcomes, so under load outcomes cost
 * no commit of their own.
 */
export class SqliteLedger implements Ledger {
  private readonly sql;
  private readonly statements = new Map<string, Database.Statement>();
  /**
   * Keys by hash, as last read or written through this connection; dropped whenever another
   * connection (the CLI, another worker) has committed to the ledger.
   */
  private readonly keyCache = new Map<string, KeyRecord>();
  private readonly externalWrites: ExternalWrites;
  private readonly debits = new DebitBatcher((jobs) => this.runDebits(jobs));
  /** Debits of keys with spend caps, by key id, batched as the others: one transaction decides a batch. */
  private readonly cappedDebits = new DebitBatcher((jobs) => this.runCappedDebits(jobs));
  private readonly credits: SqliteCredits;
  private readonly reports: SqliteLedgerReports;
  private readonly outcomes = new OutcomeWriter((outcomes) => this.inTransaction(() => this.writeOutcomes(outcomes)));
  private readonly insertAudit: (entry: NewAuditEntry) => void;
  private readonly completeClaim: (entry: IdempotencyEntry, response: StoredResponse) => void;

  /** `lowBalanceThreshold`: LOW_BALANCE_THRESHOLD, the mark of keys that have none of their own. */
  constructor(
    private readonly db: Database.Database,
    lowBalanceThreshold: number | null = null,
  ) {
    this.sql = prepareStatements(db);
    this.credits = new SqliteCredits(db, lowBalanceThreshold);
    this.reports = new SqliteLedgerReports(db);
    this.externalWrites = new ExternalWrites(db, dirname(db.name), basename(db.name));
    this.insertAudit = prepareAuditInsert(db);
    this.completeClaim = prepareCompletion(db);
  }

  async createKey(input: NewKey, record?: ChangeRecord<KeyRecord>): Promise<KeyRecord> {
    const createdAt = new Date().toISOString();
    const rateLimit = input.rateLimit ?? null;
    const key: KeyRecord = {
      id: input.id,
      name: input.name,
      status: 'active',
      balance: input.credits,
      createdAt,
      rateLimit,
      expiringGrants: 0,
      prices: null,
      lowBalanceThreshold: null,
      expiresAt: input.expiresAt ?? null,
      metadata: input.metadata ?? null,
      spendCaps: input.spendCaps ?? null,
    };
    this.inTransaction(() => {
      this.sql.insertKey.run(
        input.id,
        input.keyHash,
        input.name,
        'active',
        input.credits,
        createdAt,
        rateLimit,
        key.expiresAt,
        key.metadata === null ? null : JSON.stringify(key.metadata),
        key.spendCaps === null ? null : JSON.stringify(key.spendCaps),
      );
      this.sql.insertCreateGrant.run(input.id, input.credits, createdAt);
      this.writeChange(record, key);
    });
    return key;
  }

  async findKeyByHash(keyHash: string): Promise<KeyRecord | undefined> {
    if (this.externalWrites.happened()) this.keyCache.clear();
    const cached = this.keyCache.get(keyHash);
    if (cached) return cached;
    const key = this.keyBy(this.sql.keyByHash, keyHash);
    if (key) {
      if (this.keyCache.size >= KEY_CACHE_LIMIT) this.keyCache.clear();
      this.keyCache.set(keyHash, key);
    }
    return key;
  }

  async listKeysPage(query: KeyQuery): Promise<{ keys: KeyRecord[]; nextCursor: string | null }> {
    const after = query.cursor === null ? undefined : keyCursorPlace(query.cursor);
    const rows = this.sql.keysPage.all({
      status: query.status ?? null,
      name: query.name ?? null,
      nameContains: query.nameContains ?? null,
      maxBalance: query.maxBalance ?? null,
      afterAt: after?.createdAt ?? null,
      afterId: after?.id ?? '',
      limit: query.limit + 1,
    }) as KeyRow[];
    return keyPage(rows.map(keyFromRow), query.limit);
  }

  async findKeyById(id: string): Promise<KeyRecord | undefined> {
    return this.keyBy(this.sql.keyById, id);
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (this.sql.allKeys.all() as KeyRow[]).map(keyFromRow);
  }

  async topUp(keyId: string, amount: number, options: GrantOptions = {}, record?: ChangeRecord<TopUpResult>): Promise<TopUpResult> {
    return this.changeKey(keyId, record, (key): TopUpResult => {
      if (key && options.idempotencyRef !== undefined && this.credits.grantedBefore(options.idempotencyRef))
        return { outcome: 'granted-before', key };
      const refusal = topUpRefusal(key, amount);
      if (refusal) return refusal;
      this.credits.grant(keyId, amount, 'topup', options);
      return { outcome: 'topped-up', key: this.keyBy(this.sql.keyById, keyId) as KeyRecord };
    });
  }

  async expireDue(now: string, limit: number): Promise<Expiry[]> {
    const expiries: Expiry[] = [];
    for (const grant of this.credits.dueGrants(now, limit)) {
      const expiry = await this.changeKey(grant.key_id, undefined, () => this.credits.expireGrant(grant.id, grant.key_id));
      if (expiry) expiries.push(expiry);
    }
    return expiries;
  }

  async expiringCredits(keyId: string): Promise<ExpiringCredits[]> {
    return this.db.transaction(() => this.credits.expiringCredits(keyId))();
  }

  async refillRule(keyId: string): Promise<RefillRule | null> {
    return this.credits.refillRule(keyId);
  }

  async setRefill(keyId: string, plan: RefillPlan | null, now: string, record?: ChangeRecord<RefillChange>): Promise<RefillChange> {
    return this.changeKey(keyId, record, (key): RefillChange => {
      if (!key) return { outcome: 'not-found' };
      if (key.status === 'revoked' && plan !== null) return { outcome: 'revoked', key };
      const change = this.credits.setRefill(keyId, plan, now);
      return { outcome: 'set', ...change, balance: change.refill?.balance ?? key.balance };
    });
  }

  async refillDue(now: string, limit: number): Promise<Refill[]> {
    const refills: Refill[] = [];
    for (const keyId of this.credits.dueRefills(now, limit)) {
      const refill = await this.changeKey(keyId, undefined, (key) => (key?.status === 'revoked' ? undefined : this.credits.refill(keyId, now)));
      if (refill) refills.push(refill);
    }
    return refills;
  }

  async announceExpiredKeys(now: string, limit: number): Promise<KeyEnd[]> {
    const ends: KeyEnd[] = [];
    for (const { id } of this.sql.endedKeys.all(now, limit) as Array<{ id: string }>) {
      const end = await this.changeKey(id, undefined, () => {
        const row = this.sql.announceEnd.get(id, now) as { balance: number; expires_at: string } | undefined;
        if (!row) return undefined;
        this.credits.recordEvent('key.expired', id, { balance: row.balance, expired_at: row.expires_at });
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
    return this.changeKey(keyId, record, (key): RollResult => {
      if (!key) return { outcome: 'not-found' };
      if (key.status === 'revoked') return { outcome: 'revoked', key };
      this.sql.forgetRetired.run(keyId, now);
      if (oldKeyValidUntil !== null) this.sql.retireHash.run(oldKeyValidUntil, keyId);
      this.sql.setHash.run(newKeyHash, keyId);
      this.credits.recordEvent('key.rolled', keyId, { balance: key.balance, old_key_valid_until: oldKeyValidUntil });
      return { outcome: 'rolled', key };
    });
  }

  async setKeyRateLimit(keyId: string, rateLimit: number | null, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return this.changeKey(keyId, record, () => {
      this.sql.setRateLimit.run(rateLimit, keyId);
      return this.keyBy(this.sql.keyById, keyId);
    });
  }

  async setKeyStatus(keyId: string, status: KeyStatus, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return this.changeKey(keyId, record, (before) => {
      this.sql.setStatus.run(status, keyId);
      const after = this.keyBy(this.sql.keyById, keyId);
      if (after && before?.status !== 'revoked' && after.status === 'revoked')
        this.credits.recordEvent('key.revoked', keyId, { balance: after.balance });
      return after;
    });
  }

  debit(keyHash: string, endpoint: string, options: DebitOptions = {}): Promise<DebitResult> {
    return this.debits.submit(keyHash, endpoint, options);
  }

  async capSpend(keyId: string, caps: SpendCap[], now: number): Promise<Array<{ cap: SpendCap; spent: number; resetsAt: string }>> {
    return capPeriods(caps, now).map((period) => {
      const row = this.sql.periodSpend.get(keyId, period.cap.interval, period.start) as { spent: number } | undefined;
      return { cap: period.cap, spent: row?.spent ?? 0, resetsAt: period.end };
    });
  }

  debitCapped(keyId: string, endpoint: string, options: DebitOptions, now: number): Promise<DebitResult> {
    return this.cappedDebits.submit(keyId, endpoint, { ...options, at: now });
  }

  async updateKeySettings(keyId: string, settings: KeySettings, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return this.changeKey(keyId, record, (key) => {
      if (!key) return undefined;
      this.sql.updateSettings.run({
        keyId,
        setPrices: settings.prices === undefined ? 0 : 1,
        prices: settings.prices ? JSON.stringify(settings.prices) : null,
        setThreshold: settings.lowBalanceThreshold === undefined ? 0 : 1,
        threshold: settings.lowBalanceThreshold ?? null,
        setExpiry: settings.expiresAt === undefined ? 0 : 1,
        expiresAt: settings.expiresAt ?? null,
        setMetadata: settings.metadata === undefined ? 0 : 1,
        metadata: settings.metadata ? JSON.stringify(settings.metadata) : null,
        setCaps: settings.spendCaps === undefined ? 0 : 1,
        caps: settings.spendCaps ? JSON.stringify(settings.spendCaps) : null,
      });
      return this.keyBy(this.sql.keyById, keyId);
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

  private keyBy(statement: Database.Statement, value: string): KeyRecord | undefined {
    const row = statement.get(value) as KeyRow | undefined;
    return row && keyFromRow(row);
  }

  /**
   * A change to one key in an immediate transaction, with its record (audit entry, completed claim):
   * all of it commits, or none. The key cache is dropped first.
   */
  private changeKey<T>(keyId: string, record: ChangeRecord<T> | undefined, change: (key: KeyRecord | undefined) => T): Promise<T> {
    this.keyCache.clear();
    return Promise.resolve(
      this.inTransaction(() => {
        const result = change(this.keyBy(this.sql.keyById, keyId));
        this.writeChange(record, result);
        return result;
      }),
    );
  }

  private writeChange<T>(record: ChangeRecord<T> | undefined, result: T): void {
    const { audit, completion } = changeWrites(record, result);
    if (audit) this.insertAudit(audit);
    if (completion) this.completeClaim(completion.entry, completion.response);
  }

  /**
   * One transaction for the whole batch, and per key one conditional statement: it takes
   * MIN(balance, n) credits for the key's n requests in the batch and records in last_debit how
   * many it took (SET expressions read the row as it was), so the balance can never go negative
   * and exactly that many requests are charged. The charges are appended in multi-row inserts.
   */
  private runDebits(jobs: DebitJob[]): DebitResult[] {
    const pendingOutcomes = this.outcomes.take();
    try {
      return this.inTransaction(() => {
        this.writeOutcomes(pendingOutcomes);
        return this.debitBatch(jobs);
      });
    } catch (error) {
      this.outcomes.giveBack(pendingOutcomes);
      this.keyCache.clear();
      throw error;
    }
  }

  private debitBatch(jobs: DebitJob[]): DebitResult[] {
    const results = new Array<DebitResult>(jobs.length);
    const charged: Array<{ job: DebitJob; index: number; keyId: string; balance: number }> = [];
    for (const [keyHash, indexes] of positionsByKey(jobs)) {
      const { debited, granted, spent } = this.debitKey(
        keyHash,
        indexes.map((index) => (jobs[index] as DebitJob).cost),
      );
      let balance = (debited?.balance ?? 0) + spent;
      for (const index of indexes.slice(0, granted)) {
        const job = jobs[index] as DebitJob;
        balance -= job.cost;
        charged.push({ job, index, keyId: (debited as DebitedRow).id, balance });
      }
      if (granted < indexes.length) {
        const refusal = granted > 0 ? refusalFor('active') : refusalFor(this.keyBy(this.sql.keyByHash, keyHash)?.status);
        for (const index of indexes.slice(granted)) results[index] = refusal;
      }
      if (debited) {
        this.credits.recordCrossings(debited.id, debited.balance + spent, debited.balance, debited.low_balance_threshold);
        const cached = this.keyCache.get(keyHash);
        if (cached) this.keyCache.set(keyHash, { ...cached, balance: debited.balance });
      }
    }
    const at = new Date().toISOString();
    for (const chunk of inChunks(charged)) {
      const rows = chunk.flatMap(({ job, keyId }) => [keyId, job.endpoint, at, job.idempotencyRef, job.cost]);
      const insert = this.multiRow(
        'INSERT INTO charges (key_id, endpoint, at, idempotency_ref, credits) VALUES ',
        '(?, ?, ?, ?, ?)',
        '',
        chunk.length,
      );
      const lastId = Number(insert.run(rows).lastInsertRowid);
      // Rows of one INSERT take consecutive rowids in VALUES order (charges are never deleted).
      chunk.forEach((charge, offset) => {
        results[charge.index] = { outcome: 'charged', balance: charge.balance, chargeId: lastId - chunk.length + 1 + offset };
      });
    }
    return results;
  }

  /**
   * One key's debits of a batch, in order, each whole: a statement per run of equal costs (usually
   * one), stopping at the first the balance does not cover. The row last debited, how many debits
   * it took and the credits they cost.
   */
  private debitKey(keyHash: string, costs: number[]): { debited: DebitedRow | undefined; granted: number; spent: number } {
    let debited: DebitedRow | undefined;
    let granted = 0;
    let spent = 0;
    for (let start = 0; start < costs.length; ) {
      const cost = costs[start] as number;
      let end = start + 1;
      while (end < costs.length && costs[end] === cost) end++;
      const row = this.sql.debit.get({ keyHash, count: end - start, cost }) as DebitedRow | undefined;
      if (!row) break;
      debited = row;
      granted += row.last_debit;
      spent += row.last_debit * cost;
      if (row.last_debit < end - start) break;
      start = end;
    }
    return { debited, granted, spent };
  }

  /**
   * A batch of capped debits in one immediate transaction: per key, its caps' periods read once,
   * then its debits decided in order (spend-caps.ts, decideCapped), the balance, charges, periods'
   * spend and events written together.
   */
  private runCappedDebits(jobs: DebitJob[]): DebitResult[] {
    const results = new Array<DebitResult>(jobs.length);
    this.keyCache.clear();
    this.inTransaction(() => {
      for (const [keyId, indexes] of positionsByKey(jobs)) {
        const batch = indexes.map((index) => jobs[index] as DebitJob);
        const key = this.keyBy(this.sql.keyById, keyId);
        if (key?.status !== 'active') {
          for (const index of indexes) results[index] = refusalFor(key?.status);
          continue;
        }
        const at = (batch[0] as DebitJob).at;
        const periods = capPeriods(key.spendCaps ?? [], at).map((period) => {
          const row = this.sql.periodSpend.get(keyId, period.cap.interval, period.start) as { spent: number; cap_reached_sent: number } | undefined;
          return { ...period, spent: row?.spent ?? 0, sent: row?.cap_reached_sent === 1 };
        });
        const { decisions, spent, reachedNow } = decideCapped(
          batch.map((job) => job.cost),
          key.balance,
          periods,
        );
        const after = key.balance - spent;
        if (spent > 0) {
          this.sql.spendOne.get(spent, keyId, spent);
          for (const period of periods) this.sql.addSpend.run(keyId, period.cap.interval, period.start, spent);
          this.credits.recordCrossings(keyId, key.balance, after, key.lowBalanceThreshold);
        }
        for (const { period, reached } of reachedNow) {
          this.sql.capReachedSent.run(keyId, period.cap.interval, period.start);
          this.credits.recordEvent('credits.cap_reached', keyId, capEventData(after, reached));
        }
        const chargedAt = new Date(at).toISOString();
        decisions.forEach((decision, position) => {
          const index = indexes[position] as number;
          const job = batch[position] as DebitJob;
          if (decision.outcome === 'charged') {
            const chargeId = Number(this.sql.insertCharge.run(keyId, job.endpoint, chargedAt, job.idempotencyRef, job.cost).lastInsertRowid);
            results[index] = { outcome: 'charged', balance: decision.balance, chargeId };
          } else
            results[index] = decision.outcome === 'capped' ? { outcome: 'capped', balance: after, reached: decision.reached } : refusalFor('active');
        });
      }
    });
    return results;
  }

  private inTransaction<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  private writeOutcomes(outcomes: ChargeOutcome[]): void {
    for (const chunk of inChunks(outcomes)) {
      this.multiRow(
        'UPDATE charges SET outcome_status = outcome.column2 FROM (VALUES ',
        '(?, ?)',
        ') AS outcome WHERE charges.id = outcome.column1 AND charges.outcome_status IS NULL',
        chunk.length,
      ).run(chunk.flat());
    }
  }

  /** A ledger statement repeating `row` count times, prepared once per shape. */
  private multiRow(prefix: string, row: string, suffix: string, count: number): Database.Statement {
    const sql = `${prefix}${Array.from({ length: count }, () => row).join(', ')}${suffix}`;
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

function* inChunks<T>(rows: T[]): Generator<T[]> {
  for (let start = 0; start < rows.length; start += MULTI_ROW_CHUNK) yield rows.slice(start, start + MULTI_ROW_CHUNK);
}
