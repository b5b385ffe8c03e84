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

export interface IdempotencyEntry {
  keyHash: string;
  idempotencyKey: string;
  ref: string;
}

/** Idempotency entries, kept in the ledger's database so a claim can see its request's charge. */
export interface IdempotencyStore {
  claim(request: IdempotencyRequest): Promise<IdempotencyClaim>;
  /** Keeps the response of the claim `ref`; the entry is replayed from now on. */
  complete(entry: IdempotencyEntry, response: StoredResponse): Promise<void>;
  /** Forgets a claim whose request was refused before its debit, so a retry runs afresh. */
  release(entry: IdempotencyEntry): Promise<void>;
  /** Deletes expired entries; returns how many. */
  purgeExpired(): Promise<number>;
}
