import type { PoolClient } from 'pg';
import { insertAudit } from '../admin/postgres-admin-store.js';
import { completeClaim } from '../idempotency/postgres-idempotency.js';
import type { PostgresDatabase } from '../platform/postgres-database.js';
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
import { OutcomeWriter } from './outcome-writer.js';
import { applyRefill, expireGrant, expiringCredits, grant, recordEvent, refillRule, setRefill } from './postgres-credits.js';
import type { Refill, RefillPlan, RefillRule } from './refills.js';
import { capPeriods, decideCapped, type SpendCap } from './spend-caps.js';

interface DebitedRow {
  key_hash: string;
  balance: number | null;
  granted: number | null;
  charge_ids: number[] | null;
  status: KeyStatus | null;
}

/** The key, its row locked until the transaction ends. */
async function lockedKey(client: PoolClient, keyId: string): Promise<KeyRecord | undefined> {
  return keyOf((await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1 FOR UPDATE`, [keyId])).rows);
}

function keyOf(rows: KeyRow[]): KeyRecord | undefined {
  return rows[0] && keyFromRow(rows[0]);
}

/**
 * The ledger in PostgreSQL, shared by every instance. Debits follow the embedded ledger's design
 * (per key and batch, one conditional UPDATE taking LEAST(balance, n)) in one stored function per
 * batch, so a batch is one round trip and holds no row lock across the network.
 */
export class PostgresLedger implements Ledger {
  private readonly debits = new DebitBatcher((jobs) => this.runDebits(jobs));
  /** Debits of keys with spend caps, by key id, batched as the others: a burst past a cap takes the key's row lock once per batch. */
  private readonly cappedDebits = new DebitBatcher((jobs) => this.runCappedDebits(jobs));
  private readonly outcomes = new OutcomeWriter(async (outcomes) => {
    await this.db.query('SELECT record_outcomes($1, $2)', [outcomes.map(([id]) => id), outcomes.map(([, status]) => status)]);
  });

  /** `lowBalanceThreshold`: LOW_BALANCE_THRESHOLD, the mark of keys that have none of their own. */
  constructor(
    private readonly db: PostgresDatabase,
    private readonly lowBalanceThreshold: number | null = null,
  ) {}

  async createKey(input: NewKey, record?: ChangeRecord<KeyRecord>): Promise<KeyRecord> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<KeyRow>(
        `INSERT INTO keys (id, key_hash, name, status, balance, rate_limit, expires_at, metadata, spend_caps)
         VALUES ($1, $2, $3, 'active', $4, $5, $6, $7, $8) RETURNING ${KEY_COLUMNS}`,
        [
          input.id,
          input.keyHash,
          input.name,
          input.credits,
          input.rateLimit ?? null,
          input.expiresAt ?? null,
          input.metadata ? JSON.stringify(input.metadata) : null,
          input.spendCaps ? JSON.stringify(input.spendCaps) : null,
        ],
      );
      await client.query(`INSERT INTO credit_grants (key_id, amount, reason) VALUES ($1, $2, 'create')`, [input.id, input.credits]);
      const key = keyFromRow(rows[0] as KeyRow);
      await writeChange(client, record, key);
      return key;
    });
  }

  async findKeyByHash(keyHash: string): Promise<KeyRecord | undefined> {
    return keyOf((await this.db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM keys WHERE key_hash = $1`, [keyHash], 'key-by-hash')).rows);
  }

  /** Ordered by creation to the millisecond, as the cursor holds it (PostgreSQL keeps microseconds). */
  async listKeysPage(query: KeyQuery): Promise<{ keys: KeyRecord[]; nextCursor: string | null }> {
    const after = query.cursor === null ? undefined : keyCursorPlace(query.cursor);
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM keys
       WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR name = $2)
         AND ($3::timestamptz IS NULL OR (date_trunc('milliseconds', created_at), id) < ($3::timestamptz, $4))
         AND ($6::text IS NULL OR strpos(lower(name), lower($6)) > 0) AND ($7::bigint IS NULL OR balance <= $7)
       ORDER BY date_trunc('milliseconds', created_at) DESC, id DESC LIMIT $5`,
      [
        query.status ?? null,
        query.name ?? null,
        after?.createdAt ?? null,
        after?.id ?? '',
        query.limit + 1,
        query.nameContains ?? null,
        query.maxBalance ?? null,
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
       GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [query.bucket, query.from, query.to, query.keyId ?? null],
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
    return keyOf((await this.db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1`, [id])).rows);
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, id`)).rows.map(keyFromRow);
  }

  async topUp(keyId: string, amount: number, options: GrantOptions = {}, record?: ChangeRecord<TopUpResult>): Promise<TopUpResult> {
    return this.changeKey(keyId, record, async (client, key): Promise<TopUpResult> => {
      if (key && options.idempotencyRef !== undefined) {
        const before = await client.query('SELECT 1 FROM credit_grants WHERE idempotency_ref = $1', [options.idempotencyRef]);
        if (before.rowCount) return { outcome: 'granted-before', key };
      }
      const refusal = topUpRefusal(key, amount);
      if (refusal) return refusal;
      await grant(client, keyId, amount, 'topup', options);
      return { outcome: 'topped-up', key: (await lockedKey(client, keyId)) as KeyRecord };
    });
  }

  async expireDue(now: string, limit: number): Promise<Expiry[]> {
    const { rows } = await this.db.query<{ id: string; key_id: string }>(
      'SELECT id, key_id FROM credit_grants WHERE remaining > 0 AND expires_at <= $1 ORDER BY expires_at, id LIMIT $2',
      [now, limit],
    );
    const expiries: Expiry[] = [];
    for (const due of rows) {
      const expiry = await this.db.transaction(async (client) => {
        await lockedKey(client, due.key_id);
        return expireGrant(client, due.id, due.key_id);
      });
      if (expiry) expiries.push(expiry);
    }
    return expiries;
  }

  async expiringCredits(keyId: string): Promise<ExpiringCredits[]> {
    return expiringCredits(this.db, keyId);
  }

  async refillRule(keyId: string): Promise<RefillRule | null> {
    return refillRule(this.db, keyId);
  }

  async setRefill(keyId: string, plan: RefillPlan | null, now: string, record?: ChangeRecord<RefillChange>): Promise<RefillChange> {
    return this.changeKey(keyId, record, async (client, key): Promise<RefillChange> => {
      if (!key) return { outcome: 'not-found' };
      if (key.status === 'revoked' && plan !== null) return { outcome: 'revoked', key };
      const change = await setRefill(client, keyId, plan, now);
      return { outcome: 'set', ...change, balance: change.refill?.balance ?? key.balance };
    });
  }

  async refillDue(now: string, limit: number): Promise<Refill[]> {
    const { rows } = await this.db.query<{ key_id: string }>(
      'SELECT key_id FROM refill_rules WHERE next_refill_at <= $1 ORDER BY next_refill_at LIMIT $2',
      [now, limit],
    );
    const refills: Refill[] = [];
    for (const { key_id: keyId } of rows) {
      const refill = await this.db.transaction(async (client) => {
        const key = await lockedKey(client, keyId);
        return key?.status === 'revoked' ? undefined : applyRefill(client, keyId, now);
      });
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
      const end = await this.changeKey(id, undefined, async (client) => {
        const announced = await client.query<{ balance: number; expires_at: Date }>(
          'UPDATE keys SET expiry_announced = true WHERE id = $1 AND NOT expiry_announced AND expires_at <= $2 RETURNING balance, expires_at',
          [id, now],
        );
        const row = announced.rows[0];
        if (!row) return undefined;
        const expiredAt = row.expires_at.toISOString();
        await recordEvent(client, 'key.expired', id, { balance: Number(row.balance), expired_at: expiredAt });
        return { keyId: id, expiredAt };
      });
      if (end) ends.push(end);
    }
    return ends;
  }

  async findRetiredKey(keyHash: string): Promise<RetiredKey | undefined> {
    const { rows } = await this.db.query<KeyRow & { current_hash: string; valid_until: Date }>(
      'SELECT k.*, k.key_hash AS current_hash, r.valid_until FROM retired_keys r JOIN keys k ON k.id = r.key_id WHERE r.key_hash = $1',
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
      await recordEvent(client, 'key.rolled', keyId, { balance: key.balance, old_key_valid_until: oldKeyValidUntil });
      return { outcome: 'rolled', key };
    });
  }

  async setKeyRateLimit(keyId: string, rateLimit: number | null, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return this.changeKey(keyId, record, async (client) =>
      keyOf((await client.query<KeyRow>(`UPDATE keys SET rate_limit = $2 WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId, rateLimit])).rows),
    );
  }

  async setKeyStatus(keyId: string, status: KeyStatus, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined> {
    return this.changeKey(keyId, record, async (client) => {
      const changed = await client.query<KeyRow>(`UPDATE keys SET status = $2 WHERE id = $1 AND status <> 'revoked' RETURNING ${KEY_COLUMNS}`, [
        keyId,
        status,
      ]);
      const key = keyOf(changed.rows);
      if (key?.status === 'revoked') await recordEvent(client, 'key.revoked', keyId, { balance: key.balance });
      return key ?? keyOf((await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1`, [keyId])).rows);
    });
  }

  debit(keyHash: string, endpoint: string, options: DebitOptions = {}): Promise<DebitResult> {
    return this.debits.submit(keyHash, endpoint, options);
  }

  async capSpend(keyId: string, caps: SpendCap[], now: number): Promise<Array<{ cap: SpendCap; spent: number; resetsAt: string }>> {
    const periods = capPeriods(caps, now);
    const { rows } = await this.db.query<{ interval: string; period_start: Date; spent: number }>(
      'SELECT interval, period_start, spent FROM key_spend WHERE key_id = $1 AND period_start = ANY($2::timestamptz[])',
      [keyId, periods.map((period) => period.start)],
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
    return this.changeKey(keyId, record, async (client) => {
      const { rows } = await client.query<KeyRow>(
        `UPDATE keys SET prices = CASE WHEN $2 THEN $3::jsonb ELSE prices END,
         low_balance_threshold = CASE WHEN $4 THEN $5::bigint ELSE low_balance_threshold END,
         expires_at = CASE WHEN $6 THEN $7::timestamptz ELSE expires_at END,
         expiry_announced = CASE WHEN $6 THEN false ELSE expiry_announced END,
         metadata = CASE WHEN $8 THEN $9::jsonb ELSE metadata END,
         spend_caps = CASE WHEN $10 THEN $11::jsonb ELSE spend_caps END WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
        [
          keyId,
          settings.prices !== undefined,
          settings.prices ? JSON.stringify(settings.prices) : null,
          settings.lowBalanceThreshold !== undefined,
          settings.lowBalanceThreshold ?? null,
          settings.expiresAt !== undefined,
          settings.expiresAt ?? null,
          settings.metadata !== undefined,
          settings.metadata ? JSON.stringify(settings.metadata) : null,
          settings.spendCaps !== undefined,
          settings.spendCaps ? JSON.stringify(settings.spendCaps) : null,
        ],
      );
      return keyOf(rows);
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

  async listGrants(keyId: string): Promise<CreditGrant[]> {
    const { rows } = await this.db.query<{ key_id: string; amount: number; reason: CreditGrant['reason']; at: Date; expires_at: Date | null }>(
      'SELECT key_id, amount, reason, at, expires_at FROM credit_grants WHERE key_id = $1 ORDER BY id',
      [keyId],
    );
    return rows.map((row) => ({
      keyId: row.key_id,
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
    const { rows } = await this.db.query<{ key_id: string; balance: number; granted: number; charged: number; expired: number; consistent: boolean }>(
      `SELECT key_id, balance, granted::bigint, charged, expired::bigint,
         granted - charged - expired = balance AND balance >= 0 AS consistent FROM (
         SELECT k.id AS key_id, k.balance,
           (SELECT coalesce(sum(g.amount), 0) FROM credit_grants g WHERE g.key_id = k.id) AS granted,
           (SELECT coalesce(sum(c.credits), 0) FROM charges c WHERE c.key_id = k.id) AS charged,
           (SELECT coalesce(sum(e.amount), 0) FROM credit_expiries e WHERE e.key_id = k.id) AS expired
         FROM keys k) AS ledger ORDER BY key_id`,
    );
    return rows.map((row) => ({
      keyId: row.key_id,
      granted: Number(row.granted),
      charged: Number(row.charged),
      expired: Number(row.expired),
      balance: Number(row.balance),
      consistent: row.consistent,
    }));
  }

  /**
   * A batch of capped debits: per key one transaction holding its row lock, its caps' periods read
   * once, its debits decided in order (spend-caps.ts, decideCapped), and the balance, charges,
   * periods' spend and events written together.
   */
  private async runCappedDebits(jobs: DebitJob[]): Promise<DebitResult[]> {
    const results = new Array<DebitResult>(jobs.length);
    for (const [keyId, indexes] of positionsByKey(jobs)) {
      const batch = indexes.map((index) => jobs[index] as DebitJob);
      const decided = await this.changeKey(keyId, undefined, (client, key) => this.debitCappedKey(client, key, batch));
      decided.forEach((result, position) => {
        results[indexes[position] as number] = result;
      });
    }
    return results;
  }

  private async debitCappedKey(client: PoolClient, key: KeyRecord | undefined, batch: DebitJob[]): Promise<DebitResult[]> {
    if (key?.status !== 'active') return batch.map(() => refusalFor(key?.status));
    const at = (batch[0] as DebitJob).at;
    const periods = [];
    for (const period of capPeriods(key.spendCaps ?? [], at)) {
      const { rows } = await client.query<{ spent: number; cap_reached_sent: boolean }>(
        'SELECT spent, cap_reached_sent FROM key_spend WHERE key_id = $1 AND interval = $2 AND period_start = $3',
        [key.id, period.cap.interval, period.start],
      );
      periods.push({ ...period, spent: Number(rows[0]?.spent ?? 0), sent: rows[0]?.cap_reached_sent === true });
    }
    const { decisions, spent, reachedNow } = decideCapped(
      batch.map((job) => job.cost),
      key.balance,
      periods,
    );
    const after = key.balance - spent;
    if (spent > 0) {
      await client.query('UPDATE keys SET balance = balance - $2 WHERE id = $1', [key.id, spent]);
      for (const period of periods) {
        await client.query(
          `INSERT INTO key_spend (key_id, interval, period_start, spent) VALUES ($1, $2, $3, $4)
           ON CONFLICT (key_id, interval, period_start) DO UPDATE SET spent = key_spend.spent + excluded.spent`,
          [key.id, period.cap.interval, period.start, spent],
        );
      }
      // As the debit functions call it: only at or under a mark, the depleted one (0) included.
      const mark = key.lowBalanceThreshold ?? this.lowBalanceThreshold;
      if (after <= Math.max(mark ?? 0, 0)) await client.query('SELECT record_crossings($1, $2, $3, $4)', [key.id, key.balance, after, mark]);
    }
    for (const { period, reached } of reachedNow) {
      await client.query(
        `INSERT INTO key_spend (key_id, interval, period_start, spent, cap_reached_sent) VALUES ($1, $2, $3, 0, true)
         ON CONFLICT (key_id, interval, period_start) DO UPDATE SET cap_reached_sent = true`,
        [key.id, period.cap.interval, period.start],
      );
      await recordEvent(client, 'credits.cap_reached', key.id, capEventData(after, reached));
    }
    const charged = batch.filter((_, position) => decisions[position]?.outcome === 'charged');
    const { rows: ids } =
      charged.length === 0
        ? { rows: [] }
        : await client.query<{ id: number }>(
            `INSERT INTO charges (key_id, endpoint, at, idempotency_ref, credits)
       SELECT $1, endpoint, $2, ref, cost FROM unnest($3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS job(endpoint, ref, cost, position)
       ORDER BY position RETURNING id`,
            [
              key.id,
              new Date(at).toISOString(),
              charged.map((job) => job.endpoint),
              charged.map((job) => job.idempotencyRef),
              charged.map((job) => job.cost),
            ],
          );
    const chargeIds = ids.map((row) => Number(row.id)).sort((a, b) => a - b);
    let next = 0;
    return decisions.map((decision): DebitResult => {
      if (decision.outcome === 'charged') return { outcome: 'charged', balance: decision.balance, chargeId: chargeIds[next++] as number };
      return decision.outcome === 'capped' ? { outcome: 'capped', balance: after, reached: decision.reached } : refusalFor('active');
    });
  }

  /**
   * A change to one key in a transaction holding the key's row lock, with its record (audit entry,
   * completed claim): all of it commits, or none.
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

  /** Writes every debit and outcome still pending. The pool itself belongs to the store. */
  async close(): Promise<void> {
    await this.debits.drain();
    await this.cappedDebits.drain();
    await this.outcomes.close();
  }

  /**
   * The whole batch in one statement (the debit_batch function; debit_one_key when the batch is
   * one key's): per key one conditional UPDATE taking LEAST(balance, n) credits for its n
   * requests, the charges of the requests it covered (a key's first ones, in order), and, read
   * from the same snapshot, why a key that took nothing was refused.
   */
  private async runDebits(jobs: DebitJob[]): Promise<DebitResult[]> {
    const positions = positionsByKey(jobs);
    const totals = runningTotals(jobs, positions);
    const { rows } = await this.db.query<DebitedRow>(...debitStatement(jobs, positions, totals, this.lowBalanceThreshold));
    const results = new Array<DebitResult>(jobs.length);
    for (const row of rows) {
      const indexes = positions.get(row.key_hash) ?? [];
      const granted = row.granted ?? 0;
      // Charge ids come from one sequence in the order of the requests, which ORDER BY position fixes.
      const before = Number(row.balance) + (granted > 0 ? (totals[indexes[granted - 1] as number] as number) : 0);
      indexes.slice(0, granted).forEach((index, order) => {
        results[index] = { outcome: 'charged', balance: before - (totals[index] as number), chargeId: Number(row.charge_ids?.[order]) };
      });
      const refusal = refusalFor(granted > 0 ? 'active' : (row.status ?? undefined));
      for (const index of indexes.slice(granted)) results[index] = refusal;
    }
    return results;
  }
}

async function writeChange<T>(client: PoolClient, record: ChangeRecord<T> | undefined, result: T): Promise<void> {
  const { audit, completion } = changeWrites(record, result);
  if (audit) await insertAudit(client, audit);
  if (completion) await completeClaim(client, completion.entry, completion.response);
}

/** Each debit's cost added up with those of the same key before it in the batch. */
function runningTotals(jobs: DebitJob[], positions: Map<string, number[]>): number[] {
  const totals = new Array<number>(jobs.length);
  for (const indexes of positions.values()) {
    let total = 0;
    for (const index of indexes) {
      total += (jobs[index] as DebitJob).cost;
      totals[index] = total;
    }
  }
  return totals;
}

function debitStatement(
  jobs: DebitJob[],
  positions: Map<string, number[]>,
  totals: number[],
  lowBalanceThreshold: number | null,
): [string, unknown[], string] {
  const endpoints = jobs.map((job) => job.endpoint);
  const refs = jobs.map((job) => job.idempotencyRef);
  const costs = jobs.map((job) => job.cost);
  const uniformCost = costs.every((cost) => cost === costs[0]) ? costs[0] : null;
  if (positions.size === 1) {
    const sql = 'SELECT key_hash, balance, granted, status, charge_ids FROM debit_one_key($1, $2, $3, $4, $5, $6, $7)';
    return [sql, [jobs[0]?.keyHash, endpoints, costs, totals, refs, lowBalanceThreshold, uniformCost], 'debit-one-key'];
  }
  // Each debit's rank among its key's debits: the first `granted` of a key are the charged ones.
  const ordinals = new Array<number>(jobs.length);
  for (const indexes of positions.values()) {
    indexes.forEach((index, order) => {
      ordinals[index] = order + 1;
    });
  }
  const sql = 'SELECT key_hash, balance, granted, status, charge_ids FROM debit_batch($1, $2, $3, $4, $5, $6, $7, $8)';
  return [sql, [jobs.map((job) => job.keyHash), endpoints, costs, totals, ordinals, refs, lowBalanceThreshold, uniformCost], 'debit-batch'];
}
