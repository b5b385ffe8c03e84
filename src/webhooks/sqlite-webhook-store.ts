import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { NewAuditEntry } from '../admin/admin-store.js';
import { prepareAuditInsert } from '../admin/sqlite-admin-store.js';
import type { EventType, LedgerEvent } from '../billing/events.js';
import { cursorOf, placeOf } from '../platform/cursor.js';
import {
  type Delivery,
  type DeliveryAttempt,
  type DeliveryState,
  type DueDelivery,
  type WebhookEndpoint,
  type WebhookStore,
  wants,
} from './webhook-store.js';

interface EndpointRow {
  id: string;
  url: string;
  secret: string;
  events: string | null;
  created_at: string;
}

interface EventRow {
  id: string;
  type: EventType;
  data: string;
  created_at: string;
  /** The metadata of the event's key as it is now, JSON text; null when it has none. */
  key_metadata: string | null;
}

/** An event's columns, with the metadata of its key, which events carry (`metadata` in `data`). */
const EVENT_COLUMNS = 'e.id, e.type, e.data, e.created_at, k.metadata AS key_metadata FROM webhook_events e LEFT JOIN keys k ON k.id = e.key_id';

interface DeliveryRow {
  id: string;
  event_id: string;
  type: EventType;
  endpoint_id: string;
  url: string | null;
  state: DeliveryState;
  attempts: string;
  next_attempt_at: string | null;
  created_at: string;
}

function endpointOf(row: EndpointRow): WebhookEndpoint {
  return { id: row.id, url: row.url, secret: row.secret, events: row.events === null ? null : JSON.parse(row.events), createdAt: row.created_at };
}

function eventOf(row: EventRow): LedgerEvent {
  const data = JSON.parse(row.data) as LedgerEvent['data'];
  return {
    id: row.id,
    type: row.type,
    created_at: row.created_at,
    data: row.key_metadata === null ? data : { ...data, metadata: JSON.parse(row.key_metadata) },
  };
}

export function newDeliveryId(): string {
  return `whd_${randomBytes(12).toString('hex')}`;
}

/** The webhook outbox and deliveries in the embedded ledger's file. */
export class SqliteWebhookStore implements WebhookStore {
  private readonly sql;
  private readonly insertAudit: (entry: NewAuditEntry) => void;

  constructor(private readonly db: Database.Database) {
    this.insertAudit = prepareAuditInsert(db);
    this.sql = {
      insertEndpoint: db.prepare('INSERT INTO webhook_endpoints (id, url, secret, events, created_at) VALUES (?, ?, ?, ?, ?)'),
      putEndpoint: db.prepare('INSERT OR REPLACE INTO webhook_endpoints (id, url, secret, events, created_at) VALUES (?, ?, ?, ?, ?)'),
      endpoints: db.prepare('SELECT * FROM webhook_endpoints ORDER BY created_at, id'),
      deleteEndpoint: db.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
      undispatched: db.prepare('SELECT id, type FROM webhook_events WHERE dispatched = 0 ORDER BY created_at, id LIMIT ?'),
      insertDelivery: db.prepare(
        `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, state, next_attempt_at, created_at) VALUES (?, ?, ?, 'pending', ?, ?)`,
      ),
      markDispatched: db.prepare('UPDATE webhook_events SET dispatched = 1 WHERE id = ?'),
      lease: db.prepare(
        `UPDATE webhook_deliveries SET next_attempt_at = @leaseUntil WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= @now ORDER BY next_attempt_at LIMIT @limit)
         RETURNING id, event_id, endpoint_id, attempts`,
      ),
      event: db.prepare(`SELECT ${EVENT_COLUMNS} WHERE e.id = ?`),
      endpoint: db.prepare('SELECT * FROM webhook_endpoints WHERE id = ?'),
      attempt: db.prepare(
        `UPDATE webhook_deliveries SET attempts = json_insert(attempts, '$[#]', json(@attempt)), state = @state, next_attempt_at = @next WHERE id = @id`,
      ),
      deliveries: db.prepare(
        `SELECT d.*, e.type, p.url FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
         LEFT JOIN webhook_endpoints p ON p.id = d.endpoint_id
         WHERE (@afterAt IS NULL OR (d.created_at, d.id) < (@afterAt, @afterId))
         ORDER BY d.created_at DESC, d.id DESC LIMIT @limit`,
      ),
      retry: db.prepare(`UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ? WHERE id = ?`),
      events: db.prepare(
        `SELECT ${EVENT_COLUMNS} WHERE (@keyId IS NULL OR e.key_id = @keyId) AND (@accountId IS NULL OR e.account_id = @accountId)
         ORDER BY e.created_at DESC, e.id DESC LIMIT @limit`,
      ),
    };
  }

  async createEndpoint(endpoint: WebhookEndpoint, audit: NewAuditEntry): Promise<void> {
    this.db.transaction(() => {
      this.sql.insertEndpoint.run(...this.endpointRow(endpoint));
      this.insertAudit(audit);
    })();
  }

  async putEndpoint(endpoint: WebhookEndpoint): Promise<void> {
    this.sql.putEndpoint.run(...this.endpointRow(endpoint));
  }

  async listEndpoints(): Promise<WebhookEndpoint[]> {
    return (this.sql.endpoints.all() as EndpointRow[]).map(endpointOf);
  }

  async deleteEndpoint(id: string, audit: NewAuditEntry): Promise<boolean> {
    return this.audited(() => this.sql.deleteEndpoint.run(id).changes > 0, audit);
  }

  async dispatchEvents(now: string, limit: number): Promise<number> {
    return this.db
      .transaction(() => {
        const events = this.sql.undispatched.all(limit) as Array<{ id: string; type: string }>;
        if (events.length === 0) return 0;
        const endpoints = (this.sql.endpoints.all() as EndpointRow[]).map(endpointOf);
        for (const event of events) {
          for (const endpoint of endpoints.filter((candidate) => wants(candidate, event.type))) {
            this.sql.insertDelivery.run(newDeliveryId(), event.id, endpoint.id, now, now);
          }
          this.sql.markDispatched.run(event.id);
        }
        return events.length;
      })
      .immediate();
  }

  async leaseDueDeliveries(now: string, leaseUntil: string, limit: number): Promise<DueDelivery[]> {
    const leased = this.db
      .transaction(
        () => this.sql.lease.all({ now, leaseUntil, limit }) as Array<{ id: string; event_id: string; endpoint_id: string; attempts: string }>,
      )
      .immediate();
    return leased.map((row) => {
      const endpoint = this.sql.endpoint.get(row.endpoint_id) as EndpointRow | undefined;
      return {
        id: row.id,
        event: eventOf(this.sql.event.get(row.event_id) as EventRow),
        endpoint: endpoint && endpointOf(endpoint),
        attempts: (JSON.parse(row.attempts) as unknown[]).length,
      };
    });
  }

  async recordAttempt(id: string, attempt: DeliveryAttempt, next: { state: DeliveryState; nextAttemptAt: string | null }): Promise<void> {
    this.sql.attempt.run({ id, attempt: JSON.stringify(attempt), state: next.state, next: next.nextAttemptAt });
  }

  async listDeliveries(limit: number, cursor: string | null): Promise<{ deliveries: Delivery[]; nextCursor: string | null }> {
    const after = cursor === null ? undefined : placeOf(cursor);
    const rows = this.sql.deliveries.all({ afterAt: after?.createdAt ?? null, afterId: after?.id ?? '', limit: limit + 1 }) as DeliveryRow[];
    const deliveries = rows.slice(0, limit).map((row) => ({
      id: row.id,
      eventId: row.event_id,
      type: row.type,
      endpointId: row.endpoint_id,
      endpointUrl: row.url,
      state: row.state,
      attempts: JSON.parse(row.attempts) as DeliveryAttempt[],
      nextAttemptAt: row.next_attempt_at,
      createdAt: row.created_at,
    }));
    return { deliveries, nextCursor: rows.length > limit ? cursorOf(deliveries[deliveries.length - 1] as Delivery) : null };
  }

  async retryDelivery(id: string, now: string, audit: NewAuditEntry): Promise<boolean> {
    return this.audited(() => this.sql.retry.run(now, id).changes > 0, audit);
  }

  /** A change and, when it changed something, its audit entry, in one transaction. */
  private audited(change: () => boolean, audit: NewAuditEntry): boolean {
    return this.db.transaction(() => {
      const changed = change();
      if (changed) this.insertAudit(audit);
      return changed;
    })();
  }

  async listEvents(limit: number, holderId?: string): Promise<LedgerEvent[]> {
    const account = holderId?.startsWith('acct_');
    const rows = this.sql.events.all({ keyId: account ? null : (holderId ?? null), accountId: account ? holderId : null, limit }) as EventRow[];
    return rows.map(eventOf);
  }

  private endpointRow(endpoint: WebhookEndpoint): [string, string, string, string | null, string] {
    return [endpoint.id, endpoint.url, endpoint.secret, endpoint.events === null ? null : JSON.stringify(endpoint.events), endpoint.createdAt];
  }
}
