import type { Clock } from '../billing/credit-service.js';
import { webhookSignature } from './signature.js';
import type { DeliveryAttempt, DueDelivery, WebhookStore } from './webhook-store.js';

/**
 * Seconds from a failed attempt to the next: the first retry within 30 s, then growing, the last
 * about 24 hours after the first attempt; after it the delivery has failed (a retry can be asked for).
 */
export const RETRY_DELAYS_S = [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800];

/** How long an instance holds a delivery it is sending: past it, another may send it (same webhook-id). */
const LEASE_MS = 60_000;
const EVENTS_PER_PASS = 500;
const DELIVERIES_PER_PASS = 50;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Delivers the outbox: events become deliveries to the endpoints that want them, and each is POSTed
 * with Standard Webhooks headers, retried with backoff until the endpoint answers 2xx. Runs beside
 * requests, never in them.
 */
export class WebhookSender {
  constructor(
    private readonly store: WebhookStore,
    private readonly clock: Clock,
    private readonly options: { timeoutMs: number },
  ) {}

  /** One pass: dispatch new events, then send what is due. */
  async runOnce(): Promise<void> {
    const now = this.clock();
    await this.store.dispatchEvents(iso(now), EVENTS_PER_PASS);
    const due = await this.store.leaseDueDeliveries(iso(now), iso(now + LEASE_MS), DELIVERIES_PER_PASS);
    await Promise.all(due.map((delivery) => this.send(delivery)));
  }

  private async send(delivery: DueDelivery): Promise<void> {
    const attempt: DeliveryAttempt = { at: iso(this.clock()), status: null };
    if (delivery.endpoint) attempt.status = await this.post(delivery.endpoint, delivery);
    const ok = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
    const made = delivery.attempts + 1;
    const next = ok
      ? { state: 'delivered' as const, nextAttemptAt: null }
      : !delivery.endpoint || made > RETRY_DELAYS_S.length
        ? { state: 'failed' as const, nextAttemptAt: null }
        : { state: 'pending' as const, nextAttemptAt: iso(this.clock() + (RETRY_DELAYS_S[made - 1] as number) * 1000) };
    await this.store.recordAttempt(delivery.id, attempt, next);
  }

  /** The endpoint's HTTP status, or null when it did not answer in time. */
  private async post(endpoint: { url: string; secret: string }, delivery: DueDelivery): Promise<number | null> {
    const body = JSON.stringify(delivery.event);
    const timestamp = Math.floor(this.clock() / 1000);
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'metered-search-webhooks',
          'webhook-id': delivery.event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': webhookSignature(endpoint.secret, delivery.event.id, timestamp, body),
        },
      });
      await response.body?.cancel();
      return response.status;
    } catch {
      return null;
    }
  }
}
