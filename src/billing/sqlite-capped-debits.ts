import type { EventHolder } from './accounts.js';
import { holderOf } from './accounts.js';
import type { DebitJob } from './debit-batcher.js';
import { capEventData } from './events.js';
import type { DebitResult, KeyRecord } from './ledger.js';
import { refusalFor } from './ledger-rules.js';
import { type CapHolder, type CapPeriodState, capPeriods, decideCapped, periodStarts, type SpendCap, type UncountedSpend } from './spend-caps.js';
import type { SqliteCredits } from './sqlite-credits.js';
import type { LedgerStatements } from './sqlite-ledger-statements.js';

/**
 * One key's capped debits of a batch in the embedded ledger, inside the batch's immediate
 * transaction: its caps' and its account's caps' periods read once, its debits decided in order
 * (spend-caps.ts, decideCapped), the balance, charges, periods' spend and events written together.
 */
export function debitCappedKey(sql: LedgerStatements, credits: SqliteCredits, key: KeyRecord | undefined, batch: DebitJob[]): DebitResult[] {
  if (key?.status !== 'active') return batch.map(() => refusalFor(key?.status));
  const at = (batch[0] as DebitJob).at;
  foldUncounted(sql, 'key', key.id, key.spendCaps, at);
  foldUncounted(sql, 'account', key.accountId, key.accountSpendCaps, at);
  const periods = [
    ...capPeriodStates(sql, 'key', key.id, key.spendCaps, at),
    ...capPeriodStates(sql, 'account', key.accountId, key.accountSpendCaps, at),
  ];
  const { decisions, spent, reachedNow } = decideCapped(
    batch.map((job) => job.cost),
    key.balance,
    periods,
  );
  const after = key.balance - spent;
  const holder: EventHolder = holderOf(key);
  if (spent > 0) {
    sql.spendOne.get(spent, key.accountId, spent);
    for (const period of periods) sql.spends[period.holder].addSpend.run(holderIdOf(key, period.holder), period.cap.interval, period.start, spent);
    credits.recordCrossings(holder, key.balance, after, key.lowBalanceThreshold);
  }
  for (const { period, reached } of reachedNow) {
    sql.spends[period.holder].capReachedSent.run(holderIdOf(key, period.holder), period.cap.interval, period.start);
    credits.recordEvent('credits.cap_reached', holder, capEventData(after, reached));
  }
  const chargedAt = new Date(at).toISOString();
  const results = decisions.map((decision, position): DebitResult => {
    const job = batch[position] as DebitJob;
    if (decision.outcome === 'charged') {
      const chargeId = Number(sql.insertCharge.run(key.id, job.endpoint, chargedAt, job.idempotencyRef, job.cost).lastInsertRowid);
      return { outcome: 'charged', balance: decision.balance, chargeId };
    }
    return decision.outcome === 'capped' ? { outcome: 'capped', balance: after, reached: decision.reached } : refusalFor('active');
  });
  const lastCharge = results.reduce((last, result) => (result.outcome === 'charged' ? result.chargeId : last), 0);
  if (lastCharge > 0) {
    if (key.spendCaps) sql.setCapCounted.run(key.id, lastCharge);
    if (key.accountSpendCaps) sql.setCapCounted.run(key.accountId, lastCharge);
  }
  return results;
}

/**
 * Adds to a holder's periods the charges its spend does not count yet: those made through an
 * instance that did not know of its caps yet (it knows a key as of at most a second ago).
 */
function foldUncounted(sql: LedgerStatements, holder: CapHolder, holderId: string, caps: SpendCap[] | null, at: number): void {
  if (!caps || caps.length === 0) return;
  const counted = (sql.capCounted.get(holderId) as { charge_id: number } | undefined)?.charge_id ?? 0;
  const uncounted = sql.spends[holder].uncounted.get({ holder: holderId, after: counted, ...periodStarts(at) }) as UncountedSpend;
  if (uncounted.last === null) return;
  for (const period of capPeriods(caps, at)) {
    const spent = uncounted[period.cap.interval];
    if (spent > 0) sql.spends[holder].addSpend.run(holderId, period.cap.interval, period.start, spent);
  }
  sql.setCapCounted.run(holderId, uncounted.last);
}

/**
 * Counts a holder's current periods anew from its charges, for caps just set: what it spent
 * before them counts toward them. Caps removed forget what was counted.
 */
export function recountCaps(sql: LedgerStatements, holder: CapHolder, holderId: string, caps: SpendCap[] | null, now: number): void {
  sql.forgetCapCounted.run(holderId);
  if (!caps || caps.length === 0) return;
  for (const period of capPeriods(caps, now)) sql.spends[holder].resetSpend.run(holderId, period.cap.interval, period.start);
  foldUncounted(sql, holder, holderId, caps, now);
}

/** A holder's caps' current periods, with what each spent so far and whether credits.cap_reached was sent. */
function capPeriodStates(sql: LedgerStatements, holder: CapHolder, holderId: string, caps: SpendCap[] | null, at: number): CapPeriodState[] {
  return capPeriods(caps ?? [], at).map((period) => {
    const row = sql.spends[holder].periodSpend.get(holderId, period.cap.interval, period.start) as
      | { spent: number; cap_reached_sent: number }
      | undefined;
    return { ...period, holder, spent: row?.spent ?? 0, sent: row?.cap_reached_sent === 1 };
  });
}

/** The id a holder's spend is counted under: the key's, or its account's. */
function holderIdOf(key: KeyRecord, holder: CapHolder): string {
  return holder === 'key' ? key.id : key.accountId;
}
