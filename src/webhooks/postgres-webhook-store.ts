import type { NewAuditEntry } from '../admin/admin-store.js';
import { insertAudit } from '../admin/postgres-admin-store.js';
import type { EventType, LedgerEvent } from '../billing/events.js';
import { cursorOf, placeOf } from '../platform/cursor.js';
import type { PostgresDatabase } from '../platform/postgres-database.js';
import type { Delivery, DeliveryAttempt, DeliveryState, DueDelivery, WebhookEndpoint, WebhookStore } from './webhook-store.js';

interface EndpointRow {
  id: string;
  url: string;
  secret: string;
  events: EventType[] | null;
  created_at: Date;
}

interface EventRow {
  id: string;
  type: EventType;
  data: LedgerEvent['data'];
  created_at: Date;
  /** The metadata of the event's key as it is now; null when it has none. */
  key_metadata: Record<string, unknown> | null;
}

function endpointOf(row: EndpointRow): WebhookEndpoint {
  return { id: row.id, url: row.url, secret: row.secret, events: row.events, createdAt: row.created_at.toISOString() };
}

function eventOf(row: EventRow): LedgerEvent {
  const data = row.key_metadata === null ? row.data : { ...row.data, metadata: row.key_metadata };
  return { id: row.id, type: row.type, created_at: row.created_at.toISOString(), data };
}

/** The webhook outbox and deliveries shared by every instance: a row lock or SKIP LOCKED gives each event and attempt to one. */
export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly db: PostgresDatabase) {}

  async createEndpoint(endpoint: WebhookEndpoint, audit: NewAuditEntry): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query('INSERT INTO webhook_endpoints (id, url, secret, events, created_at) VALUES ($1, $2, $3, $4, $5)', endpointRow(endpoint));
      await insertAudit(client, audit);
    });
  }

  async putEndpoint(endpoint: WebhookEndpoint): Promise<void> {
    await this.db.query(
      `INSERT INTO webhook_endpoints (id, url, secret, events, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO UPDATE SET url = excluded.url, secret = excluded.secret, events = excluded.events`,
      endpointRow(endpoint),
    );
  }

  async listEndpoints(): Promise<WebhookEndpoint[]> {
    return (await this.db.query<EndpointRow>('SELECT * FROM webhook_endpoints ORDER BY created_at, id')).rows.map(endpointOf);
  }

  async deleteEndpoint(id: string, audit: NewAuditEntry): Promise<boolean> {
    return this.audited('DELETE FROM webhook_endpoints WHERE id = $1', [id], audit);
  }

  async dispatchEvents(now: string, limit: number): Promise<number> {
    const { rows } = await this.db.query<{ dispatched: number }>(
      `WITH picked AS (
         SELECT id, type FROM webhook_events WHERE NOT dispatched ORDER BY created_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
       ), made AS (
         INSERT INTO webhook_deliveries (id, event_id, endpoint_id, state, next_attempt_at, created_at)
         SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), picked.id, e.id, 'pending', $1, $1
         FROM picked JOIN webhook_endpoints e ON e.events IS NULL OR e.events ? picked.type
       ), marked AS (
         UPDATE webhook_events SET dispatched = true FROM picked WHERE webhook_events.id = picked.id RETURNING 1
       )
       SELECT count(*)::integer AS dispatched FROM marked`,
      [now, limit],
    );
    return rows[0]?.dispatched ?? 0;
  }

  async leaseDueDeliveries(now: string, leaseUntil: string, limit: number): Promise<DueDelivery[]> {
    const { rows } = await this.db.query<{ id: string; attempts: number; event: EventRow; endpoint: EndpointRow | null }>(
      `WITH due AS (
         SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= $1
         ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED
       ), leased AS (
         UPDATE webhook_deliveries d SET next_attempt_at = $2 FROM due WHERE d.id = due.id
         RETURNING d.id, d.event_id, d.endpoint_id, jsonb_array_length(d.attempts) AS attempts
       )
       SELECT leased.id, leased.attempts, to_jsonb(ev) || jsonb_build_object('key_metadata', k.metadata) AS event, to_jsonb(ep) AS endpoint
       FROM leased JOIN webhook_events ev ON ev.id = leased.event_id LEFT JOIN keys k ON k.id = ev.key_id
       LEFT JOIN webhook_endpoints ep ON ep.id = leased.endpoint_id`,
      [now, leaseUntil, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      attempts: row.attempts,
      event: eventOf({ ...row.event, created_at: new Date(row.event.created_at) }),
      endpoint: row.endpoint ? endpointOf({ ...row.endpoint, created_at: new Date(row.endpoint.created_at) }) : undefined,
    }));
  }

  async recordAttempt(id: string, attempt: DeliveryAttempt, next: { state: DeliveryState; nextAttemptAt: string | null }): Promise<void> {
    await this.db.query('UPDATE webhook_deliveries SET attempts = attempts || $2::jsonb, state = $3, next_attempt_at = $4 WHERE id = $1', [
      id,
      JSON.stringify([attempt]),
      next.state,
      next.nextAttemptAt,
    ]);
  }

  async listDeliveries(limit: number, cursor: string | null): Promise<{ deliveries: Delivery[]; nextCursor: string | null }> {
    const after = cursor === null ? undefined : placeOf(cursor);
    const { rows } = await this.db.query<{
      id: string;
      event_id: string;
      type: EventType;
      endpoint_id: string;
      url: string | null;
      state: DeliveryState;
      attempts: DeliveryAttempt[];
      next_attempt_at: Date | null;
      created_at: Date;
    }>(
      `SELECT d.id, d.event_id, e.type, d.endpoint_id, p.url, d.state, d.attempts, d.next_attempt_at, d.created_at
       FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id LEFT JOIN webhook_endpoints p ON p.id = d.endpoint_id
       WHERE ($1::timestamptz IS NULL OR (date_trunc('milliseconds', d.created_at), d.id) < ($1::timestamptz, $2))
       ORDER BY date_trunc('milliseconds', d.created_at) DESC, d.id DESC LIMIT $3`,
      [after?.createdAt ?? null, after?.id ?? '', limit + 1],
    );
    const deliveries = rows.slice(0, limit).map((row) => ({
      id: row.id,
      eventId: row.event_id,
      type: row.type,
      endpointId: row.endpoint_id,
      endpointUrl: row.url,
      state: row.state,
      attempts: row.attempts,
      nextAttemptAt: row.next_attempt_at?.toISOString() ?? null,
      createdAt: row.created_at.toISOString(),
    }));
    return { deliveries, nextCursor: rows.length > limit ? cursorOf(deliveries[deliveries.length - 1] as Delivery) : null };
  }

  async retryDelivery(id: string, now: string, audit: NewAuditEntry): Promise<boolean> {
    return this.audited(`UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = $2 WHERE id = $1`, [id, now], audit);
  }

  /** A change and, when it changed a row, its audit entry, in one transaction. */
  private audited(change: string, values: unknown[], audit: NewAuditEntry): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const changed = ((await client.query(change, values)).rowCount ?? 0) > 0;
      if (changed) await insertAudit(client, audit);
      return changed;
    });
  }

  async listEvents(limit: number, holderId?: string): Promise<LedgerEvent[]> {
    const account = holderId?.startsWith('acct_');
    const { rows } = await this.db.query<EventRow>(
      `SELECT e.id, e.type, e.data, e.created_at, k.metadata AS key_metadata FROM webhook_events e LEFT JOIN keys k ON k.id = e.key_id
       WHERE ($2::text IS NULL OR e.key_id = $2) AND ($3::text IS NULL OR e.account_id = $3) ORDER BY e.created_at DESC, e.id DESC LIMIT $1`,
      [limit, account ? null : (holderId ?? null), account ? holderId : null],
    );
    return rows.map(eventOf);
  }
}

function endpointRow(endpoint: WebhookEndpoint): unknown[] {
  return [endpoint.id, endpoint.url, endpoint.secret, endpoint.events === null ? null : JSON.stringify(endpoint.events), endpoint.createdAt];
}
