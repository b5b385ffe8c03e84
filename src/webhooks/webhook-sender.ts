import { Agent, fetch } from 'undici';
import type { Clock } from '../platform/clock.js';
import { webhookSignature } from './signature.js';
import type { DeliveryAttempt, DueDelivery, WebhookStore } from './webhook-store.js';
import { guardedLookup, webhookUrlProblem } from './webhook-url.js';

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
    private readonly options: { timeoutMs: number; allowLinkLocal: boolean },
  ) {
    this.dispatcher = options.allowLinkLocal ? undefined : new Agent({ connect: { lookup: guardedLookup } });
  }

  /** Connections that refuse a name resolving to a link-local address; the default unless WEBHOOK_ALLOW_LINK_LOCAL. */
  private readonly dispatcher: Agent | undefined;

  /** One pass: dispatch new events, then send what is due. */
  async runOnce(): Promise<void> {
    const now = this.clock();
    await this.store.dispatchEvents(iso(now), EVENTS_PER_PASS);
    const due = await this.store.leaseDueDeliveries(iso(now), iso(now + LEASE_MS), DELIVERIES_PER_PASS);
    await Promise.all(due.map((delivery) => this.send(delivery)));
  }

  private async send(delivery: DueDelivery): Promise<void> {
    const at = iso(this.clock());
    const answer = delivery.endpoint ? await this.post(delivery.endpoint, delivery) : { status: null, error: 'the endpoint was deleted' };
    const attempt: DeliveryAttempt = { at, ...answer };
    const ok = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
    const made = delivery.attempts + 1;
    const next = ok
      ? { state: 'delivered' as const, nextAttemptAt: null }
      : !delivery.endpoint || made > RETRY_DELAYS_S.length
        ? { state: 'failed' as const, nextAttemptAt: null }
        : { state: 'pending' as const, nextAttemptAt: iso(this.clock() + (RETRY_DELAYS_S[made - 1] as number) * 1000) };
    await this.store.recordAttempt(delivery.id, attempt, next);
  }

  /** The endpoint's HTTP status, or why there is none; and for any answer but 2xx, what went wrong. */
  private async post(endpoint: { url: string; secret: string }, delivery: DueDelivery): Promise<Omit<DeliveryAttempt, 'at'>> {
    const refused = webhookUrlProblem(endpoint.url, this.options.allowLinkLocal);
    if (refused) return { status: null, error: refused };
    const body = JSON.stringify(delivery.event);
    const timestamp = Math.floor(this.clock() / 1000);
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        body,
        redirect: 'manual',
        dispatcher: this.dispatcher,
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
      const ok = response.status >= 200 && response.status < 300;
      return ok ? { status: response.status } : { status: response.status, error: `the endpoint answered HTTP ${response.status}` };
    } catch (error) {
      return { status: null, error: failureOf(error, this.options.timeoutMs) };
    }
  }
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

/** Why a request got no answer, in the words an operator can act on: DNS, refused, timeout, TLS or the connection. */
export function failureOf(error: unknown, timeoutMs: number): string {
  const { name, cause } = error as { name?: string; cause?: { code?: string; message?: string; hostname?: string } };
  if (name === 'TimeoutError' || name === 'AbortError') return `timeout: no answer within ${timeoutMs} ms`;
  const code = cause?.code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `dns: the host name could not be resolved (${code})`;
  if (code === 'ELINKLOCAL') return `refused: ${cause?.message}`;
  if (code === 'ECONNREFUSED') return 'refused: nothing listens at that address and port (ECONNREFUSED)';
  if (TLS_CODE.test(code)) return `tls: ${cause?.message ?? code} (${code})`;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return `connection: closed before an answer (${code})`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return `timeout: could not connect within ${timeoutMs} ms`;
  return `connection: ${cause?.message ?? (error as Error).message ?? String(error)}${code ? ` (${code})` : ''}`;
}
