import { randomBytes } from 'node:crypto';

/**
 * What the ledger tells webhook endpoints, written in the transaction of the change that causes it.
 * credits.low and credits.depleted: a balance crossed its mark downwards (once per crossing).
 */
export const EVENT_TYPES = [
  'credits.low',
  'credits.depleted',
  'credits.granted',
  'credits.expired',
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
  data: { key_id: string; balance: number; [field: string]: unknown };
}

/** Event ids are the webhook-id of every delivery of the event. */
export function newEventId(): string {
  return `evt_${randomBytes(12).toString('hex')}`;
}
