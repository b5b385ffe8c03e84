import type { AdminStore } from '../admin/admin-store.js';
import type { Ledger } from '../billing/ledger.js';
import type { DocumentStore } from '../documents/document-store.js';
import type { FaceGalleryStore } from '../faces/gallery.js';
import type { IdempotencyStore } from '../idempotency/idempotency-store.js';
import type { PortalStore } from '../portal/portal-store.js';
import type { DocumentIndex } from '../search/document-index.js';
import type { SynonymStore } from '../synonyms/synonym-store.js';
import type { WebhookStore } from '../webhooks/webhook-store.js';

/**
 * Every store the service keeps, opened together on one backend: SQLite files in a data folder
 * (sqlite-store.ts) or one PostgreSQL database shared by any number of instances (postgres-store.ts).
 * Services depend on the parts' interfaces only.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly ledger: Ledger;
  readonly documents: DocumentStore;
  readonly index: DocumentIndex;
  readonly idempotency: IdempotencyStore;
  readonly faces: FaceGalleryStore;
  /** Admin tokens and the audit log. */
  readonly admin: AdminStore;
  /** The customer portal's sign-in links and sessions. */
  readonly portal: PortalStore;
  /** The webhook outbox (written by the ledger), endpoints and deliveries. */
  readonly webhooks: WebhookStore;
  /** The synonym rules searches apply. */
  readonly synonyms: SynonymStore;
  /** A pooled database's connections (PostgreSQL): in all, idle, and requests waiting for one. */
  connections?(): { total: number; idle: number; waiting: number };
  /** Round-trip time of a trivial query, for /nettest. */
  ping(): Promise<number>;
  close(): Promise<void>;
}
