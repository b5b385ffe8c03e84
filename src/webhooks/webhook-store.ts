import type { NewAuditEntry } from '../admin/admin-store.js';
import type { EventType, LedgerEvent } from '../billing/events.js';

/** Where events are sent: the operator's own URL, its Standard Webhooks secret, the types it wants (null: all). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  secret: string;
  events: EventType[] | null;
  createdAt: string;
}

export interface DeliveryAttempt {
  at: string;
  /** The HTTP status the endpoint answered; null when it did not answer (refused, timed out). */
  status: number | null;
  /** Why the attempt failed: dns, refused, timeout, tls, connection, or the status answered; absent when it succeeded. */
  error?: string;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One event's delivery to one endpoint, with every attempt made. */
export interface Delivery {
  id: string;
  eventId: string;
  type: EventType;
  endpointId: string;
  /** The endpoint's URL; null once the endpoint is deleted. */
  endpointUrl: string | null;
  state: DeliveryState;
  attempts: DeliveryAttempt[];
  nextAttemptAt: string | null;
  createdAt: string;
}

/** A delivery due now, with what sending it takes. */
export interface DueDelivery {
  id: string;
  event: LedgerEvent;
  endpoint: WebhookEndpoint | undefined;
  attempts: number;
}

/**
 * The webhook outbox and its deliveries, in the ledger's database: events are written there by the
 * ledger, in the transaction of the change that causes them (billing/events.ts).
 */
export interface WebhookStore {
  /** The operator's changes (create, delete, retry) write their audit entry in their own transaction, when they change anything. */
  createEndpoint(endpoint: WebhookEndpoint, audit: NewAuditEntry): Promise<void>;
  /** Creates or replaces the endpoint with this id (WEBHOOK_URL's, set at each start). */
  putEndpoint(endpoint: WebhookEndpoint): Promise<void>;
  listEndpoints(): Promise<WebhookEndpoint[]>;
  deleteEndpoint(id: string, audit: NewAuditEntry): Promise<boolean>;
  /**
   * Turns events not yet dispatched (at most `limit`) into a pending delivery for each endpoint that
   * wants them, in one transaction; any number of instances may do it at once, each event once.
   */
  dispatchEvents(now: string, limit: number): Promise<number>;
  /**
   * Pending deliveries due at `now`, leased until `leaseUntil` so that no other instance sends them
   * meanwhile (a sender that dies lets its lease lapse, and the delivery is sent again).
   */
  leaseDueDeliveries(now: string, leaseUntil: string, limit: number): Promise<DueDelivery[]>;
  /** Records an attempt and what comes next: delivered, failed for good, or another attempt at `nextAttemptAt`. */
  recordAttempt(id: string, attempt: DeliveryAttempt, next: { state: DeliveryState; nextAttemptAt: string | null }): Promise<void>;
  /** Deliveries newest first; `cursor` is a previous page's nextCursor. */
  listDeliveries(limit: number, cursor: string | null): Promise<{ deliveries: Delivery[]; nextCursor: string | null }>;
  /** Makes a delivery pending and due at `now`; false for an unknown id. */
  retryDelivery(id: string, now: string, audit: NewAuditEntry): Promise<boolean>;
  /** Events newest first: every key's, or one key's. */
  /** The latest events, newest first: all, or those of one key (`key_…`) or of one account (`acct_…`, its keys' included). */
  listEvents(limit: number, holderId?: string): Promise<LedgerEvent[]>;
}

/** Whether an endpoint wants events of this type. */
export function wants(endpoint: Pick<WebhookEndpoint, 'events'>, type: string): boolean {
  return endpoint.events === null || (endpoint.events as string[]).includes(type);
}
