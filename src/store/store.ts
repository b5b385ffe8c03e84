/**
 * The persistence contract. Routes and services depend on this interface only, so a PostgreSQL
 * implementation can replace the embedded SQLite one without touching them.
 * Expected outcomes (unknown key, no credits) are values; only faults throw.
 */

export type KeyStatus = 'active' | 'disabled' | 'revoked';

export interface KeyRecord {
  id: string;
  name: string;
  status: KeyStatus;
  balance: number;
  createdAt: string;
  /** Requests per second this key may make; null means the service's default. */
  rateLimit: number | null;
}

/**
 * The most credits one key may hold, and so the most one grant may add: far beyond any real
 * balance, and far below where a double stops counting every credit (2^53).
 */
export const MAX_BALANCE = 1_000_000_000_000;

export type TopUpResult =
  | { outcome: 'topped-up'; key: KeyRecord }
  | { outcome: 'not-found' }
  /** Revoked keys are closed for good: nothing more is granted to them. */
  | { outcome: 'revoked'; key: KeyRecord }
  /** The balance would pass MAX_BALANCE: nothing was added. */
  | { outcome: 'over-limit'; key: KeyRecord };

export type DebitResult =
  | { outcome: 'charged'; balance: number; chargeId: number }
  | { outcome: 'no-credits' }
  | { outcome: 'inactive'; status: KeyStatus }
  | { outcome: 'unknown-key' };

export interface ChargeRecord {
  id: number;
  keyId: string;
  endpoint: string;
  at: string;
  /** HTTP status the charged request ended with; null until it is known (or if the process died first). */
  outcomeStatus: number | null;
}

export interface CreditGrant {
  keyId: string;
  amount: number;
  at: string;
  reason: 'create' | 'topup';
}

export type MetadataValue = string | number | boolean | null | MetadataValue[] | { [field: string]: MetadataValue };

export interface DocumentRecord {
  docId: string;
  title: string;
  text: string;
  metadata: Record<string, MetadataValue>;
}

export type FilterScalar = string | number | boolean | null;

export interface SearchRequest {
  /** Analysed query terms (stemming happens in the index); at least one. */
  terms: string[];
  /** Which field the terms must occur in: title and text together, one of them, or a metadata field. */
  field: { kind: 'all' } | { kind: 'title' } | { kind: 'text' } | { kind: 'metadata'; name: string };
  /** AND across fields; each field matches any of its values. An empty list matches nothing. */
  filters: Array<{ field: string; anyOf: FilterScalar[] }>;
  topK: number;
}

export interface SearchHit {
  docId: string;
  title: string;
  /** Larger is better; unbounded, comparable across queries only through the confidence mapping. */
  score: number;
}

export interface SearchResult {
  total: number;
  hits: SearchHit[];
}

/** One key's ledger: what was granted, what was charged, what is left. */
export interface LedgerAudit {
  keyId: string;
  granted: number;
  charged: number;
  balance: number;
  /** granted - charged = balance >= 0, decided by the database in exact integers (the numbers above are for display). */
  consistent: boolean;
}

/** What a request that carried an Idempotency-Key answered, kept to be replayed. */
export interface StoredResponse {
  status: number;
  body: string;
  contentType: string;
  creditsRemaining: number | null;
}

export interface IdempotencyRequest {
  keyHash: string;
  idempotencyKey: string;
  /** Hash of what makes two requests the same request: method, path, document id, body. */
  fingerprint: string;
  /** How long the claim holds before another attempt may take it over (the first is presumed dead). */
  lockMs: number;
  /** How long the entry (and its stored response) is kept. */
  ttlMs: number;
}

/**
 * The answer to claiming an idempotency key. `claimed`: this request runs; `ref` goes on its charge,
 * and `chargeId` is set when an earlier attempt that died after its debit already paid.
 */
export type IdempotencyClaim =
  | { outcome: 'claimed'; ref: string; chargeId: number | null }
  | { outcome: 'replay'; response: StoredResponse }
  | { outcome: 'in-progress' }
  | { outcome: 'mismatch' };

export interface IdempotencyStore {
  claim(request: IdempotencyRequest): Promise<IdempotencyClaim>;
  /** Keeps the response of the claim `ref`; the entry is replayed from now on. */
  complete(entry: { keyHash: string; idempotencyKey: string; ref: string }, response: StoredResponse): Promise<void>;
  /** Forgets a claim whose request was refused before its debit, so a retry runs afresh. */
  release(entry: { keyHash: string; idempotencyKey: string; ref: string }): Promise<void>;
  /** Deletes expired entries; returns how many. */
  purgeExpired(): Promise<number>;
}

/** A face in the gallery that /face/search searches, with the engine that described it. */
export interface FaceRecord {
  docId: string;
  descriptor: number[];
  faceFile: string;
  attributes: Record<string, unknown> | null;
  engine: string;
}

export interface FaceGalleryStore {
  /** Adds or replaces (by doc_id) every face given, in one transaction: all or nothing. */
  enroll(faces: FaceRecord[]): Promise<void>;
  remove(docId: string): Promise<boolean>;
  list(): Promise<FaceRecord[]>;
  /** A value that changes whenever the gallery does, so a cached copy knows when to reload. */
  version(): Promise<string>;
}

export interface IngestProgress {
  documents: number;
}

export interface Store {
  readonly kind: string;

  createKey(input: { keyHash: string; id: string; name: string; credits: number; rateLimit?: number | null }): Promise<KeyRecord>;
  findKeyByHash(keyHash: string): Promise<KeyRecord | undefined>;
  findKeyById(id: string): Promise<KeyRecord | undefined>;
  listKeys(): Promise<KeyRecord[]>;
  /** Adds credits to a key that is not revoked, up to MAX_BALANCE, atomically. */
  topUp(keyId: string, amount: number): Promise<TopUpResult>;
  setKeyStatus(keyId: string, status: KeyStatus): Promise<KeyRecord | undefined>;
  /** Sets the key's requests per second; null returns it to the service's default. */
  setKeyRateLimit(keyId: string, rateLimit: number | null): Promise<KeyRecord | undefined>;

  /**
   * Spends one credit in one conditional write and records the charge with it, atomically.
   * Resolves only once both are durable. `idempotencyRef` is recorded on the charge, so a claim
   * taken over after a crash can tell that its request already paid.
   */
  debit(keyHash: string, endpoint: string, idempotencyRef?: string): Promise<DebitResult>;
  /** Fills in the final HTTP status of a charged request. Not awaited on the request path. */
  recordOutcome(chargeId: number, status: number): void;
  listCharges(keyId: string, limit?: number): Promise<ChargeRecord[]>;
  countCharges(keyId: string): Promise<number>;
  listGrants(keyId: string): Promise<CreditGrant[]>;
  /** Every key's ledger, read in one consistent snapshot. */
  auditLedger(): Promise<LedgerAudit[]>;
  /** Idempotent requests (by claim ref) with more than one charge: there should be none. */
  auditIdempotentCharges(): Promise<Array<{ ref: string; charges: number }>>;

  getDocument(docId: string): Promise<DocumentRecord | undefined>;
  /**
   * The same document as JSON text of one object: doc_id, title, text, then the metadata fields.
   * Lets /document answer without parsing and re-serialising what was stored as JSON.
   */
  getDocumentJson(docId: string): Promise<string | undefined>;
  /** Writes every document of the source in one transaction: all or nothing. Replaces existing ids. */
  ingestDocuments(source: AsyncIterable<DocumentRecord>, onProgress?: (progress: IngestProgress) => void): Promise<number>;
  deleteDocument(docId: string): Promise<boolean>;
  countDocuments(): Promise<number>;
  search(request: SearchRequest): Promise<SearchResult>;
  /** Loads the search index now (before listening), so the first query does not wait for it. */
  prepareSearch(): Promise<void>;

  readonly idempotency: IdempotencyStore;
  readonly faces: FaceGalleryStore;

  /** Round-trip time of a trivial query, for /nettest. */
  ping(): Promise<number>;
  close(): Promise<void>;
}

/** The store cannot be reached or answered too late: the request may be retried (503). */
export class StoreUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('The data store is not available right now.', options);
  }
}
