import { randomBytes } from 'node:crypto';
import type { CapReached } from './spend-caps.js';

/**
 * What the ledger tells webhook endpoints, written in the transaction of the change that causes it.
 * credits.low and credits.depleted: an account's balance crossed its mark downwards (once per crossing).
 */
export const EVENT_TYPES = [
  'credits.low',
  'credits.depleted',
  'credits.granted',
  'credits.expired',
  'credits.cap_reached',
  'key.revoked',
  'key.rolled',
  'key.expired',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** An event as endpoints receive it. */
export interface LedgerEvent {
  id: string;
  type: EventType;
  created_at: string;
  /** key_id is absent from events about an account that no key caused (an account's top-up, refill or expiry). */
  data: { account_id: string; key_id?: string; balance: number; [field: string]: unknown };
}

/** Event ids are the webhook-id of every delivery of the event. */
export function newEventId(): string {
  return `evt_${randomBytes(12).toString('hex')}`;
}

/** What credits.cap_reached says: the cap, what its period spent, and when it resets. */
export function capEventData(balance: number, reached: CapReached): Record<string, unknown> {
  return { balance, holder: reached.holder, cap: reached.cap, spent: reached.spent, resets_at: reached.resetsAt };
}
