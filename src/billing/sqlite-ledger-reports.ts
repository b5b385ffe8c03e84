import type Database from 'better-sqlite3';
import type { AccountUsageRow } from './accounts.js';
import type { ChargeRecord, CreditGrant, KeyActivity, LedgerAudit, LedgerReports, UsageQuery, UsageRow } from './ledger.js';

interface ChargeRow {
  id: number;
  key_id: string;
  endpoint: string;
  at: string;
  outcome_status: number | null;
  credits: number;
}

function chargeOf(row: ChargeRow): ChargeRecord {
  return { id: row.id, keyId: row.key_id, endpoint: row.endpoint, at: row.at, outcomeStatus: row.outcome_status, credits: row.credits };
}

/** The embedded ledger's reads for reports (charges are by key, grants and the audit by account): charges, grants, usage over time and the audit, none of which changes anything. */
export class SqliteLedgerReports implements LedgerReports {
  private readonly sql;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      chargesByKey: db.prepare(
        'SELECT id, key_id, endpoint, at, outcome_status, credits FROM charges WHERE key_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
      ),
      countCharges: db.prepare('SELECT count(*) AS n FROM charges WHERE key_id = ?'),
      grantsByAccount: db.prepare('SELECT account_id, amount, reason, at, expires_at FROM credit_grants WHERE account_id = ? ORDER BY id'),
      activity: db.prepare('SELECT endpoint, count(*) AS n, max(at) AS last FROM charges WHERE key_id = ? GROUP BY endpoint'),
      accountCharges: db.prepare(
        `SELECT c.id, c.key_id, c.endpoint, c.at, c.outcome_status, c.credits FROM charges c JOIN keys k ON k.id = c.key_id
         WHERE k.account_id = ? ORDER BY c.id DESC LIMIT ?`,
      ),
      accountUsage: db.prepare(
        `SELECT c.key_id, c.endpoint, count(*) AS charges, sum(c.credits) AS credits FROM charges c JOIN keys k ON k.id = c.key_id
         WHERE k.account_id = ? AND c.at >= ? AND c.at < ? GROUP BY c.key_id, c.endpoint ORDER BY c.key_id, c.endpoint`,
      ),
    };
  }

  async accountCharges(accountId: string, limit: number): Promise<ChargeRecord[]> {
    const rows = this.sql.accountCharges.all(accountId, limit) as ChargeRow[];
    return rows.map(chargeOf);
  }

  async accountUsage(accountId: string, from: string, to: string): Promise<AccountUsageRow[]> {
    const rows = this.sql.accountUsage.all(accountId, from, to) as Array<{ key_id: string; endpoint: string; charges: number; credits: number }>;
    return rows.map((row) => ({ keyId: row.key_id, endpoint: row.endpoint, charges: row.charges, credits: row.credits }));
  }

  async keyActivity(keyId: string): Promise<KeyActivity> {
    const rows = this.sql.activity.all(keyId) as Array<{ endpoint: string; n: number; last: string }>;
    const lastUsedAt = rows.reduce<string | null>((last, row) => (last === null || row.last > last ? row.last : last), null);
    return { lastUsedAt, chargesByEndpoint: Object.fromEntries(rows.map((row) => [row.endpoint, row.n])) };
  }
  async usage(query: UsageQuery): Promise<UsageRow[]> {
    // ISO 8601 times in UTC compare and cut as text: the first 10 characters are the day, 13 the hour.
    const cut = query.bucket === 'day' ? 10 : 13;
    const rows = this.db
      .prepare(
        `SELECT substr(at, 1, ?) AS bucket, endpoint, outcome_status AS status, count(*) AS n, sum(credits) AS credits
         FROM charges WHERE at >= ? AND at < ? AND (? IS NULL OR key_id = ?)
           AND (? IS NULL OR key_id IN (SELECT id FROM keys WHERE account_id = ?))
         GROUP BY bucket, endpoint, status ORDER BY bucket, endpoint, status`,
      )
      .all(cut, query.from, query.to, query.keyId ?? null, query.keyId ?? null, query.accountId ?? null, query.accountId ?? null) as Array<{
      bucket: string;
      endpoint: string;
      status: number | null;
      n: number;
      credits: number;
    }>;
    const suffix = query.bucket === 'day' ? 'T00:00:00.000Z' : ':00:00.000Z';
    return rows.map((row) => ({ start: `${row.bucket}${suffix}`, endpoint: row.endpoint, status: row.status, count: row.n, credits: row.credits }));
  }
  async topSpenders(from: string, to: string, limit: number): Promise<Array<{ keyId: string; name: string; charges: number; credits: number }>> {
    const rows = this.db
      .prepare(
        `SELECT c.key_id, k.name, count(*) AS n, sum(c.credits) AS credits FROM charges c JOIN keys k ON k.id = c.key_id
         WHERE c.at >= ? AND c.at < ? GROUP BY c.key_id ORDER BY credits DESC, n DESC, c.key_id LIMIT ?`,
      )
      .all(from, to, limit) as Array<{ key_id: string; name: string; n: number; credits: number }>;
    return rows.map((row) => ({ keyId: row.key_id, name: row.name, charges: row.n, credits: row.credits }));
  }
  async listCharges(keyId: string, limit = 100, beforeId = Number.MAX_SAFE_INTEGER): Promise<ChargeRecord[]> {
    const rows = this.sql.chargesByKey.all(keyId, beforeId, limit) as ChargeRow[];
    return rows.map(chargeOf);
  }
  async countCharges(keyId: string): Promise<number> {
    return (this.sql.countCharges.get(keyId) as { n: number }).n;
  }
  async listGrants(accountId: string): Promise<CreditGrant[]> {
    const rows = this.sql.grantsByAccount.all(accountId) as Array<{
      account_id: string;
      amount: number;
      reason: CreditGrant['reason'];
      at: string;
      expires_at: string | null;
    }>;
    return rows.map((row) => ({ accountId: row.account_id, amount: row.amount, reason: row.reason, at: row.at, expiresAt: row.expires_at }));
  }
  async auditLedger(): Promise<LedgerAudit[]> {
    // One read transaction: charges and balances as of the same moment.
    const rows = this.db
      .prepare(
        `SELECT account_id, balance, granted, charged, expired, granted - charged - expired = balance AND balance >= 0 AS consistent FROM (
           SELECT a.id AS account_id, a.balance,
             (SELECT coalesce(sum(g.amount), 0) FROM credit_grants g WHERE g.account_id = a.id) AS granted,
             (SELECT coalesce(sum(c.credits), 0) FROM charges c JOIN keys k ON k.id = c.key_id WHERE k.account_id = a.id) AS charged,
             (SELECT coalesce(sum(e.amount), 0) FROM credit_expiries e WHERE e.account_id = a.id) AS expired
           FROM accounts a) ORDER BY account_id`,
      )
      .all() as Array<{ account_id: string; balance: number; granted: number; charged: number; expired: number; consistent: number }>;
    return rows.map((row) => ({
      accountId: row.account_id,
      granted: row.granted,
      charged: row.charged,
      expired: row.expired,
      balance: row.balance,
      consistent: row.consistent === 1,
    }));
  }
  async auditIdempotentCharges(): Promise<Array<{ ref: string; charges: number }>> {
    return this.db
      .prepare(
        'SELECT idempotency_ref AS ref, count(*) AS charges FROM charges WHERE idempotency_ref IS NOT NULL GROUP BY idempotency_ref HAVING count(*) > 1',
      )
      .all() as Array<{ ref: string; charges: number }>;
  }
}
