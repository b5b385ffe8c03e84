/**
 * Spend caps: at most `credits` spent through a key, or by all the keys of an account, in a UTC
 * calendar day, ISO week (from Monday) or calendar month. A request whose price would take a
 * period's spend over a cap is refused (429) and not charged; the decision is made in the debit's
 * own transaction, under the account's row lock.
 */
export type CapInterval = 'day' | 'week' | 'month';

export const CAP_INTERVALS: readonly CapInterval[] = ['day', 'week', 'month'];

export interface SpendCap {
  credits: number;
  interval: CapInterval;
}

/** Whose cap it is: the key's own, or its account's (over all of the account's keys). */
export type CapHolder = 'key' | 'account';

/** The period of `interval` that `now` falls in: its first instant and the first of the next, RFC 3339 in UTC. */
export function capPeriod(interval: CapInterval, now: number): { start: string; end: string } {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const day = date.getUTCDate();
  if (interval === 'month') return { start: iso(Date.UTC(year, month, 1)), end: iso(Date.UTC(year, month + 1, 1)) };
  if (interval === 'day') return { start: iso(Date.UTC(year, month, day)), end: iso(Date.UTC(year, month, day + 1)) };
  // ISO weeks start on Monday: getUTCDay is 0 on Sunday.
  const monday = day - ((date.getUTCDay() + 6) % 7);
  return { start: iso(Date.UTC(year, month, monday)), end: iso(Date.UTC(year, month, monday + 7)) };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Where each interval's current period starts, for summing charges by the period they fall in. */
export function periodStarts(now: number): Record<CapInterval, string> {
  return { day: capPeriod('day', now).start, week: capPeriod('week', now).start, month: capPeriod('month', now).start };
}

/**
 * Charges a holder made that its periods' spend does not count yet (`last`: the newest of them),
 * with what they spent in each current period; what a capped debit folds in before it decides.
 */
export interface UncountedSpend {
  last: number | null;
  day: number;
  week: number;
  month: number;
}

/** A cap this request would pass: its spend so far in the period, and when the period ends. */
export interface CapReached {
  holder: CapHolder;
  cap: SpendCap;
  spent: number;
  resetsAt: string;
}

/** Each cap with its current period, shortest interval first. */
export function capPeriods(caps: readonly SpendCap[], now: number): Array<{ cap: SpendCap; start: string; end: string }> {
  return CAP_INTERVALS.flatMap((interval) => {
    const cap = caps.find((candidate) => candidate.interval === interval);
    return cap ? [{ cap, ...capPeriod(interval, now) }] : [];
  });
}

/** The first cap that spending `cost` more would pass, given each period's spend so far; undefined when all leave room. */
export function capPassed(periods: Array<{ holder: CapHolder; cap: SpendCap; end: string; spent: number }>, cost: number): CapReached | undefined {
  const over = periods.find((period) => period.spent + cost > period.cap.credits);
  return over && { holder: over.holder, cap: over.cap, spent: over.spent, resetsAt: over.end };
}

/** A cap's current period as a capped debit batch reads it: what it spent so far, and whether credits.cap_reached was sent. */
export interface CapPeriodState {
  holder: CapHolder;
  cap: SpendCap;
  start: string;
  end: string;
  spent: number;
  sent: boolean;
}

export type CappedDecision = { outcome: 'charged'; balance: number } | { outcome: 'capped'; reached: CapReached } | { outcome: 'no-credits' };

/**
 * One key's capped debits of a batch, in order: each is charged when its price fits both the
 * balance and every cap's period, else refused (capped first, then no credits). What they spent
 * in all, and the caps whose credits.cap_reached is to be written now (once per cap and period).
 */
export function decideCapped(
  costs: number[],
  balance: number,
  periods: CapPeriodState[],
): { decisions: CappedDecision[]; spent: number; reachedNow: Array<{ period: CapPeriodState; reached: CapReached }> } {
  let spent = 0;
  const reachedNow: Array<{ period: CapPeriodState; reached: CapReached }> = [];
  const decisions = costs.map((cost): CappedDecision => {
    const reached = capPassed(
      periods.map((period) => ({ ...period, spent: period.spent + spent })),
      cost,
    );
    if (reached) {
      const period = periods.find((candidate) => candidate.cap === reached.cap) as CapPeriodState;
      if (!period.sent && !reachedNow.some((entry) => entry.period === period)) reachedNow.push({ period, reached });
      return { outcome: 'capped', reached };
    }
    if (balance - spent < cost) return { outcome: 'no-credits' };
    spent += cost;
    return { outcome: 'charged', balance: balance - spent };
  });
  return { decisions, spent, reachedNow };
}
