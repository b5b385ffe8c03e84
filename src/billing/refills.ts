/**
 * Refill plans. Each period of a plan grants its credits once, at the period's start; after downtime
 * only the current period is granted, never the ones missed. `add`: the credits roll over. `replace`:
 * the plan's credits of a period expire when the next period starts, so a period's refill replaces
 * what is left of the last one; credits bought by top-up are never touched.
 */
export type RefillInterval = 'day' | 'week' | 'month';
export type RefillMode = 'add' | 'replace';

export const REFILL_INTERVALS: readonly RefillInterval[] = ['day', 'week', 'month'];
export const REFILL_MODES: readonly RefillMode[] = ['add', 'replace'];

export interface RefillPlan {
  credits: number;
  interval: RefillInterval;
  mode: RefillMode;
}

export interface RefillRule extends RefillPlan {
  /** When the plan was set: the start of its first period. RFC 3339. */
  anchor: string;
  nextRefillAt: string;
}

/**
 * A period's refill: the credits granted and the key's balance after. `credits` is less than the
 * plan's `planned` when the balance had no room for all of them under MAX_BALANCE (0 when it had none).
 */
export interface Refill {
  accountId: string;
  credits: number;
  planned: number;
  balance: number;
}

/** Whether a plan is the one a rule already follows: setting it again changes nothing. */
export function samePlan(rule: RefillPlan | null, plan: RefillPlan): boolean {
  return rule !== null && rule.credits === plan.credits && rule.interval === plan.interval && rule.mode === plan.mode;
}

/**
 * Where a plan set at `now` starts: now, or, when the key's refills already paid for a period
 * that has not ended (`paidUntil`), the end of it. A plan set, changed, or ended and set again is
 * never a second refill in one period.
 */
export function planAnchor(now: string, paidUntil: string | null): string {
  return paidUntil !== null && paidUntil > now ? paidUntil : now;
}

const DAY_MS = 86_400_000;

/** The start of period `index` of a plan anchored at `anchor` (months are calendar months in UTC, the day clamped). */
export function periodStart(anchor: Date, interval: RefillInterval, index: number): Date {
  if (interval === 'day') return new Date(anchor.getTime() + index * DAY_MS);
  if (interval === 'week') return new Date(anchor.getTime() + index * 7 * DAY_MS);
  const month = anchor.getUTCMonth() + index;
  const firstOfMonth = Date.UTC(anchor.getUTCFullYear(), month, 1);
  const lastDay = new Date(Date.UTC(anchor.getUTCFullYear(), month + 1, 0)).getUTCDate();
  const start = new Date(firstOfMonth);
  start.setUTCDate(Math.min(anchor.getUTCDate(), lastDay));
  start.setUTCHours(anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds());
  return start;
}

/** The period `now` falls in (the last whose start is not after it); -1 before the anchor. */
export function periodIndex(anchor: Date, interval: RefillInterval, now: Date): number {
  if (now < anchor) return -1;
  const elapsed = now.getTime() - anchor.getTime();
  let index = interval === 'month' ? Math.floor(elapsed / (28 * DAY_MS)) : Math.floor(elapsed / ((interval === 'day' ? 1 : 7) * DAY_MS));
  while (periodStart(anchor, interval, index) > now) index--;
  while (periodStart(anchor, interval, index + 1) <= now) index++;
  return index;
}
