import type { PoolClient } from 'pg';
import type { Queryable } from '../platform/postgres-database.js';
import type { EventHolder } from './accounts.js';
import { type EventType, newEventId } from './events.js';
import { type ExpiringCredits, type Expiry, type GrantOptions, MAX_BALANCE } from './ledger.js';
import { settleSpent } from './ledger-rules.js';
import { periodIndex, periodStart, planAnchor, type Refill, type RefillPlan, type RefillRule, samePlan } from './refills.js';

interface RuleRow {
  credits: number;
  interval: RefillRule['interval'];
  mode: RefillRule['mode'];
  anchor: Date;
  last_period: number;
  next_refill_at: Date;
}

function ruleOf(row: RuleRow): RefillRule {
  return {
    credits: Number(row.credits),
    interval: row.interval,
    mode: row.mode,
    anchor: row.anchor.toISOString(),
    nextRefillAt: row.next_refill_at.toISOString(),
  };
}

/**
 * Grants, their settlement and expiry, refill plans and ledger events in PostgreSQL. Each function
 * runs on a client whose transaction holds the account's row lock (PostgresLedger), which orders it
 * against the account's debits and against other instances doing the same.
 */

/** Adds a grant to the balance, settling first; the balance after. */
export async function grant(
  client: PoolClient,
  holder: EventHolder,
  amount: number,
  reason: 'create' | 'topup' | 'refill',
  options: GrantOptions = {},
  planned = amount,
): Promise<number> {
  const { accountId } = holder;
  const expiresAt = options.expiresAt ?? null;
  await settle(client, accountId);
  await client.query(
    'INSERT INTO credit_grants (account_id, amount, reason, idempotency_ref, expires_at, remaining) VALUES ($1, $2, $3, $4, $5, $6)',
    [accountId, amount, reason, options.idempotencyRef ?? null, expiresAt, expiresAt === null ? null : amount],
  );
  const { rows } = await client.query<{ balance: number }>(
    `UPDATE accounts SET balance = balance + $2, settled_balance = balance + $2, expiring_grants = expiring_grants + $3
     WHERE id = $1 RETURNING balance`,
    [accountId, amount, expiresAt === null ? 0 : 1],
  );
  const balance = Number(rows[0]?.balance);
  await recordEvent(client, 'credits.granted', holder, { balance, credits: amount, expires_at: expiresAt, ...(planned > amount && { planned }) });
  return balance;
}

/** Takes what is left of a grant from the balance and records it; undefined when nothing was left. */
export async function expireGrant(client: PoolClient, grantId: string, accountId: string): Promise<Expiry | undefined> {
  await settle(client, accountId);
  const left = await client.query<{ remaining: number; expires_at: Date }>('SELECT remaining, expires_at FROM credit_grants WHERE id = $1', [
    grantId,
  ]);
  const { remaining, expires_at: expiresAt } = left.rows[0] as { remaining: number; expires_at: Date };
  const credits = Number(remaining);
  if (credits === 0) return undefined;
  await client.query('UPDATE credit_grants SET remaining = 0 WHERE id = $1', [grantId]);
  await client.query('INSERT INTO credit_expiries (account_id, grant_id, amount, at) VALUES ($1, $2, $3, $4)', [
    accountId,
    grantId,
    credits,
    expiresAt,
  ]);
  // Not spending: the settlement moves with the balance.
  const { rows } = await client.query<{ balance: number }>(
    `UPDATE accounts SET balance = balance - $2, settled_balance = balance - $2,
       expiring_grants = (SELECT count(*) FROM credit_grants WHERE account_id = $1 AND remaining > 0) WHERE id = $1
     RETURNING balance`,
    [accountId, credits],
  );
  const balance = Number(rows[0]?.balance);
  // credits.expired says it; no credits.low or credits.depleted, which a replace plan's rollover would send every period.
  await recordEvent(client, 'credits.expired', { accountId }, { balance, credits, expired_at: expiresAt.toISOString() });
  return { accountId, amount: credits, at: expiresAt.toISOString(), balance };
}

export async function expiringCredits(client: Queryable, accountId: string): Promise<ExpiringCredits[]> {
  // One statement: the balance and the grants as of one snapshot.
  const { rows } = await client.query<{ remaining: number; expires_at: Date; spent: number }>(
    `SELECT g.remaining, g.expires_at, coalesce(a.settled_balance, a.balance) - a.balance AS spent
     FROM accounts a JOIN credit_grants g ON g.account_id = a.id WHERE a.id = $1 AND g.remaining > 0 ORDER BY g.expires_at, g.id`,
    [accountId],
  );
  const grants = rows.map((row) => ({ remaining: Number(row.remaining), at: row.expires_at.toISOString() }));
  return settleSpent(grants, Number(rows[0]?.spent ?? 0))
    .filter((left) => left.remaining > 0)
    .map((left) => ({ credits: left.remaining, at: left.at }));
}

export async function refillRule(client: Queryable, accountId: string): Promise<RefillRule | null> {
  const { rows } = await client.query<RuleRow>('SELECT * FROM refill_rules WHERE account_id = $1', [accountId]);
  return rows[0] ? ruleOf(rows[0]) : null;
}

/**
 * Sets (or with null, ends) an account's plan. The plan it already follows changes nothing; another starts
 * where the periods already paid for end (refills.ts, planAnchor), and is granted at once if that is now.
 */
export async function setRefill(
  client: PoolClient,
  accountId: string,
  plan: RefillPlan | null,
  now: string,
): Promise<{ rule: RefillRule | null; refill: Refill | undefined; changed: boolean }> {
  const rule = await refillRule(client, accountId);
  if (plan === null) {
    await client.query('DELETE FROM refill_rules WHERE account_id = $1', [accountId]);
    return { rule: null, refill: undefined, changed: rule !== null };
  }
  if (samePlan(rule, plan)) return { rule, refill: undefined, changed: false };
  const { rows } = await client.query<{ until: Date | null }>('SELECT refill_paid_until AS until FROM accounts WHERE id = $1', [accountId]);
  const anchor = planAnchor(now, rows[0]?.until?.toISOString() ?? null);
  await client.query(
    `INSERT INTO refill_rules (account_id, credits, interval, mode, anchor, last_period, next_refill_at) VALUES ($1, $2, $3, $4, $5, -1, $5)
     ON CONFLICT (account_id) DO UPDATE SET credits = excluded.credits, interval = excluded.interval, mode = excluded.mode,
       anchor = excluded.anchor, last_period = -1, next_refill_at = excluded.next_refill_at`,
    [accountId, plan.credits, plan.interval, plan.mode, anchor],
  );
  const refill = await applyRefill(client, accountId, now);
  return { rule: await refillRule(client, accountId), refill, changed: true };
}

/** Grants the current period of the account's plan unless it was granted already; undefined then. */
export async function applyRefill(client: PoolClient, accountId: string, now: string): Promise<Refill | undefined> {
  const { rows } = await client.query<RuleRow>('SELECT * FROM refill_rules WHERE account_id = $1', [accountId]);
  const row = rows[0];
  if (!row) return undefined;
  const period = periodIndex(row.anchor, row.interval, new Date(now));
  if (period <= row.last_period) return undefined;
  const nextStart = periodStart(row.anchor, row.interval, period + 1).toISOString();
  await client.query('UPDATE refill_rules SET last_period = $2, next_refill_at = $3 WHERE account_id = $1', [accountId, period, nextStart]);
  const { rows: keys } = await client.query<{ balance: number }>('UPDATE accounts SET refill_paid_until = $2 WHERE id = $1 RETURNING balance', [
    accountId,
    nextStart,
  ]);
  // No grant lifts a balance past MAX_BALANCE: a refill grants what fits, and says so.
  const before = Number(keys[0]?.balance);
  const planned = Number(row.credits);
  const credits = Math.min(planned, MAX_BALANCE - before);
  const expiresAt = row.mode === 'replace' ? nextStart : null;
  const balance = credits > 0 ? await grant(client, { accountId }, credits, 'refill', { expiresAt }, planned) : before;
  return { accountId, credits, planned, balance };
}

/** An event for webhook endpoints, in the transaction of the change that causes it. */
export async function recordEvent(client: PoolClient, type: EventType, holder: EventHolder, data: Record<string, unknown>): Promise<void> {
  const keyId = holder.keyId ?? null;
  const about = { account_id: holder.accountId, ...(keyId !== null && { key_id: keyId }) };
  await client.query('INSERT INTO webhook_events (id, type, account_id, key_id, data) VALUES ($1, $2, $3, $4, $5)', [
    newEventId(),
    type,
    holder.accountId,
    keyId,
    JSON.stringify({ ...about, ...data }),
  ]);
}

/** Takes the credits spent since the account's last settlement from its expiring grants (ledger.ts, settleSpent). */
async function settle(client: PoolClient, accountId: string): Promise<void> {
  const { rows } = await client.query<{ id: string; remaining: number; spent: number }>(
    `SELECT g.id, g.remaining, coalesce(a.settled_balance, a.balance) - a.balance AS spent
     FROM accounts a JOIN credit_grants g ON g.account_id = a.id WHERE a.id = $1 AND g.remaining > 0 ORDER BY g.expires_at, g.id`,
    [accountId],
  );
  const spent = Number(rows[0]?.spent ?? 0);
  if (spent > 0) {
    const settled = settleSpent(
      rows.map((row) => ({ id: row.id, remaining: Number(row.remaining) })),
      spent,
    );
    await client.query(
      'UPDATE credit_grants SET remaining = settled.remaining FROM unnest($1::bigint[], $2::bigint[]) AS settled(id, remaining) WHERE credit_grants.id = settled.id',
      [settled.map((left) => left.id), settled.map((left) => left.remaining)],
    );
  }
  await client.query(
    'UPDATE accounts SET settled_balance = balance, expiring_grants = (SELECT count(*) FROM credit_grants WHERE account_id = $1 AND remaining > 0) WHERE id = $1',
    [accountId],
  );
}
