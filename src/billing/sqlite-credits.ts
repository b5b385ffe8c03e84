import type Database from 'better-sqlite3';
import type { EventHolder } from './accounts.js';
import type { EventType } from './events.js';
import { newEventId } from './events.js';
import { type ExpiringCredits, type Expiry, type GrantOptions, MAX_BALANCE } from './ledger.js';
import { balanceCrossings, settleSpent } from './ledger-rules.js';
import { periodIndex, periodStart, planAnchor, type Refill, type RefillPlan, type RefillRule, samePlan } from './refills.js';

interface RuleRow {
  account_id: string;
  credits: number;
  interval: RefillRule['interval'];
  mode: RefillRule['mode'];
  anchor: string;
  last_period: number;
  next_refill_at: string;
}

function ruleOf(row: RuleRow): RefillRule {
  return { credits: row.credits, interval: row.interval, mode: row.mode, anchor: row.anchor, nextRefillAt: row.next_refill_at };
}

function prepare(db: Database.Database) {
  return {
    insertGrant: db.prepare(
      'INSERT INTO credit_grants (account_id, amount, reason, at, idempotency_ref, expires_at, remaining) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    grantByRef: db.prepare('SELECT 1 FROM credit_grants WHERE idempotency_ref = ?'),
    addToBalance: db.prepare('UPDATE accounts SET balance = balance + ? WHERE id = ? RETURNING balance'),
    settlement: db.prepare('SELECT balance, settled_balance FROM accounts WHERE id = ?'),
    expiringGrants: db.prepare('SELECT id, remaining, expires_at FROM credit_grants WHERE account_id = ? AND remaining > 0 ORDER BY expires_at, id'),
    setRemaining: db.prepare('UPDATE credit_grants SET remaining = ? WHERE id = ?'),
    settled: db.prepare(
      'UPDATE accounts SET settled_balance = balance, expiring_grants = (SELECT count(*) FROM credit_grants WHERE account_id = @accountId AND remaining > 0) WHERE id = @accountId',
    ),
    dueGrants: db.prepare('SELECT id, account_id FROM credit_grants WHERE remaining > 0 AND expires_at <= ? ORDER BY expires_at, id LIMIT ?'),
    grantLeft: db.prepare('SELECT remaining, expires_at FROM credit_grants WHERE id = ?'),
    // Not spending: the settlement moves with the balance.
    expire: db.prepare(
      'UPDATE accounts SET balance = balance - @amount, settled_balance = balance - @amount WHERE id = @accountId RETURNING balance',
    ),
    insertExpiry: db.prepare('INSERT INTO credit_expiries (account_id, grant_id, amount, at) VALUES (?, ?, ?, ?)'),
    insertEvent: db.prepare('INSERT INTO webhook_events (id, type, account_id, key_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
    rule: db.prepare('SELECT * FROM refill_rules WHERE account_id = ?'),
    putRule: db.prepare(
      `INSERT OR REPLACE INTO refill_rules (account_id, credits, interval, mode, anchor, last_period, next_refill_at)
       VALUES (@accountId, @credits, @interval, @mode, @anchor, -1, @anchor)`,
    ),
    deleteRule: db.prepare('DELETE FROM refill_rules WHERE account_id = ?'),
    dueRules: db.prepare('SELECT account_id FROM refill_rules WHERE next_refill_at <= ? ORDER BY next_refill_at LIMIT ?'),
    ruleDone: db.prepare('UPDATE refill_rules SET last_period = ?, next_refill_at = ? WHERE account_id = ?'),
    paidUntil: db.prepare('SELECT refill_paid_until AS until FROM accounts WHERE id = ?'),
    setPaidUntil: db.prepare('UPDATE accounts SET refill_paid_until = ? WHERE id = ?'),
    balance: db.prepare('SELECT balance FROM accounts WHERE id = ?'),
  };
}

/**
 * Grants, their settlement and expiry, refill plans and ledger events in the embedded ledger. Every
 * method runs inside a transaction the ledger holds on the account (SqliteLedger.changeAccount).
 */
export class SqliteCredits {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly lowBalanceThreshold: number | null,
  ) {
    this.sql = prepare(db);
  }

  grantedBefore(idempotencyRef: string): boolean {
    return this.sql.grantByRef.get(idempotencyRef) !== undefined;
  }

  /** Adds a grant to the balance, settling first; the balance after. */
  grant(holder: EventHolder, amount: number, reason: 'create' | 'topup' | 'refill', options: GrantOptions = {}, planned = amount): number {
    const { accountId } = holder;
    const expiresAt = options.expiresAt ?? null;
    this.settle(accountId);
    const { balance } = this.sql.addToBalance.get(amount, accountId) as { balance: number };
    this.sql.insertGrant.run(
      accountId,
      amount,
      reason,
      new Date().toISOString(),
      options.idempotencyRef ?? null,
      expiresAt,
      expiresAt === null ? null : amount,
    );
    this.settle(accountId);
    this.recordEvent('credits.granted', holder, { balance, credits: amount, expires_at: expiresAt, ...(planned > amount && { planned }) });
    return balance;
  }

  dueGrants(now: string, limit: number): Array<{ id: number; account_id: string }> {
    return this.sql.dueGrants.all(now, limit) as Array<{ id: number; account_id: string }>;
  }

  /** Takes what is left of a grant from the balance and records it; undefined when nothing was left. */
  expireGrant(grantId: number, accountId: string): Expiry | undefined {
    this.settle(accountId);
    const left = this.sql.grantLeft.get(grantId) as { remaining: number; expires_at: string };
    if (left.remaining === 0) return undefined;
    const { balance } = this.sql.expire.get({ amount: left.remaining, accountId }) as { balance: number };
    this.sql.setRemaining.run(0, grantId);
    this.sql.insertExpiry.run(accountId, grantId, left.remaining, left.expires_at);
    this.settle(accountId);
    // credits.expired says it; no credits.low or credits.depleted, which a replace plan's rollover would send every period.
    this.recordEvent('credits.expired', { accountId }, { balance, credits: left.remaining, expired_at: left.expires_at });
    return { accountId, amount: left.remaining, at: left.expires_at, balance };
  }

  expiringCredits(accountId: string): ExpiringCredits[] {
    const { balance, settled_balance } = this.sql.settlement.get(accountId) as { balance: number; settled_balance: number | null };
    const grants = this.sql.expiringGrants.all(accountId) as Array<{ id: number; remaining: number; expires_at: string }>;
    return settleSpent(grants, (settled_balance ?? balance) - balance)
      .filter((grant) => grant.remaining > 0)
      .map((grant) => ({ credits: grant.remaining, at: grant.expires_at }));
  }

  refillRule(accountId: string): RefillRule | null {
    const row = this.sql.rule.get(accountId) as RuleRow | undefined;
    return row ? ruleOf(row) : null;
  }

  /**
   * Sets (or with null, ends) an account's plan. The plan it already follows changes nothing; another starts
   * where the periods already paid for end (refills.ts, planAnchor), and is granted at once if that is now.
   */
  setRefill(accountId: string, plan: RefillPlan | null, now: string): { rule: RefillRule | null; refill: Refill | undefined; changed: boolean } {
    const rule = this.refillRule(accountId);
    if (plan === null) {
      this.sql.deleteRule.run(accountId);
      return { rule: null, refill: undefined, changed: rule !== null };
    }
    if (samePlan(rule, plan)) return { rule, refill: undefined, changed: false };
    const { until } = this.sql.paidUntil.get(accountId) as { until: string | null };
    this.sql.putRule.run({ accountId, ...plan, anchor: planAnchor(now, until) });
    const refill = this.refill(accountId, now);
    return { rule: this.refillRule(accountId), refill, changed: true };
  }

  dueRefills(now: string, limit: number): string[] {
    return (this.sql.dueRules.all(now, limit) as Array<{ account_id: string }>).map((row) => row.account_id);
  }

  /** Grants the current period of the account's plan unless it was granted already; undefined then. */
  refill(accountId: string, now: string): Refill | undefined {
    const row = this.sql.rule.get(accountId) as RuleRow | undefined;
    if (!row) return undefined;
    const anchor = new Date(row.anchor);
    const period = periodIndex(anchor, row.interval, new Date(now));
    if (period <= row.last_period) return undefined;
    const nextStart = periodStart(anchor, row.interval, period + 1).toISOString();
    this.sql.ruleDone.run(period, nextStart, accountId);
    this.sql.setPaidUntil.run(nextStart, accountId);
    const expiresAt = row.mode === 'replace' ? nextStart : null;
    // No grant lifts a balance past MAX_BALANCE: a refill grants what fits, and says so.
    const { balance: before } = this.sql.balance.get(accountId) as { balance: number };
    const credits = Math.min(row.credits, MAX_BALANCE - before);
    const balance = credits > 0 ? this.grant({ accountId }, credits, 'refill', { expiresAt }, row.credits) : before;
    return { accountId, credits, planned: row.credits, balance };
  }

  /** credits.low and credits.depleted, written with the change that crossed the mark. */
  recordCrossings(holder: EventHolder, before: number, after: number, ownMark: number | null): void {
    for (const crossing of balanceCrossings(before, after, ownMark ?? this.lowBalanceThreshold)) {
      this.recordEvent(crossing.type as EventType, holder, { balance: after, threshold: crossing.threshold });
    }
  }

  recordEvent(type: EventType, holder: EventHolder, data: Record<string, unknown>): void {
    const keyId = holder.keyId ?? null;
    const about = { account_id: holder.accountId, ...(keyId !== null && { key_id: keyId }) };
    this.sql.insertEvent.run(newEventId(), type, holder.accountId, keyId, JSON.stringify({ ...about, ...data }), new Date().toISOString());
  }

  /** Takes the credits spent since the account's last settlement from its expiring grants (ledger.ts, settleSpent). */
  private settle(accountId: string): void {
    const { balance, settled_balance } = this.sql.settlement.get(accountId) as { balance: number; settled_balance: number | null };
    const spent = (settled_balance ?? balance) - balance;
    if (spent > 0) {
      const grants = this.sql.expiringGrants.all(accountId) as Array<{ id: number; remaining: number }>;
      for (const grant of settleSpent(grants, spent)) this.sql.setRemaining.run(grant.remaining, grant.id);
    }
    this.sql.settled.run({ accountId });
  }
}
