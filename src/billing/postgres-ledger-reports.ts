import type { PostgresDatabase } from '../platform/postgres-database.js';
import type { AccountUsageRow } from './accounts.js';
import type { ChargeRecord, CreditGrant, KeyActivity, LedgerAudit, LedgerReports, UsageQuery, UsageRow } from './ledger.js';

/** The shared ledger's reads for reports and the audit: charges, grants, usage over time, none of which changes anything. */
export class PostgresLedgerReports implements LedgerReports {
  constructor(private readonly db: PostgresDatabase) {}

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
}
