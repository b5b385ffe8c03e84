import { createHash } from 'node:crypto';
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from './idempotency-store.js';

export interface IdempotencySettings {
  /** How long a response is kept for replay (IDEMPOTENCY_TTL_S). */
  ttlMs: number;
  /** How long a claim holds before a retry may take it over: longer than any request may run. */
  lockMs: number;
}

/** The parts of a request that make a repeat "the same request". */
export interface RequestIdentity {
  method: string;
  path: string;
  docId: string | undefined;
  body: unknown;
}

export type Claim = { keyHash: string; idempotencyKey: string; ref: string };

/** Idempotent billable requests (Stripe's model; IETF draft-ietf-httpapi-idempotency-key-header). */
export class IdempotencyService {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly settings: IdempotencySettings,
  ) {}

  /** Bodies reach here parsed and at most MAX_JSON_DEPTH deep, so serialising them cannot fail. */
  static fingerprint(request: RequestIdentity): string {
    const body = request.body === undefined ? '' : JSON.stringify(request.body);
    return createHash('sha256')
      .update(`${request.method}\n${request.path}\n${request.docId ?? ''}\n${body}`)
      .digest('hex');
  }

  claim(keyHash: string, idempotencyKey: string, request: RequestIdentity): Promise<IdempotencyClaim> {
    return this.store.claim({
      keyHash,
      idempotencyKey,
      fingerprint: IdempotencyService.fingerprint(request),
      lockMs: this.settings.lockMs,
      ttlMs: this.settings.ttlMs,
    });
  }

  complete(claim: Claim, response: StoredResponse): Promise<void> {
    return this.store.complete(claim, response);
  }

  release(claim: Claim): Promise<void> {
    return this.store.release(claim);
  }

  purgeExpired(): Promise<number> {
    return this.store.purgeExpired();
  }
}
