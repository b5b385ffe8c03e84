import { hashApiKey } from './key-admin.js';
import type { DebitResult, KeyRecord, Ledger } from './ledger.js';

export type Authentication =
  | { outcome: 'ok'; key: KeyRecord; keyHash: string }
  | { outcome: 'unknown-key' }
  | { outcome: 'inactive'; key: KeyRecord };

/** How long `identify` may answer from memory: a set-rate reaches every instance within this. */
const IDENTIFY_CACHE_MS = 1000;
const IDENTIFY_CACHE_LIMIT = 100_000;

/** Authentication and the per-request charge, in terms of plain keys. */
export class CreditService {
  private readonly identified = new Map<string, { key: KeyRecord; until: number }>();
  private readonly lookups = new Map<string, Promise<KeyRecord | undefined>>();

  constructor(private readonly ledger: Ledger) {}

  async authenticate(apiKey: string): Promise<Authentication> {
    const keyHash = hashApiKey(apiKey);
    const key = await this.ledger.findKeyByHash(keyHash);
    if (!key) return { outcome: 'unknown-key' };
    if (key.status !== 'active') return { outcome: 'inactive', key };
    return { outcome: 'ok', key, keyHash };
  }

  /**
   * The active key behind a hash, as known at most a second ago, or undefined. Not a check of the
   * key: on billable routes the debit itself refuses unknown and inactive keys, atomically.
   * Answers from memory without a promise when it can: this runs on every billable request. When
   * the entry has expired, the requests that arrive together share one lookup: under load a busy
   * key's requests otherwise all missed at the same moment, each asking the store.
   */
  identify(keyHash: string): KeyRecord | undefined | Promise<KeyRecord | undefined> {
    const cached = this.identified.get(keyHash);
    if (cached && cached.until > performance.now()) return cached.key;
    const pending = this.lookups.get(keyHash);
    if (pending) return pending;
    const lookup = this.ledger
      .findKeyByHash(keyHash)
      .then((key) => {
        if (key?.status !== 'active') {
          this.identified.delete(keyHash);
          return undefined;
        }
        if (this.identified.size >= IDENTIFY_CACHE_LIMIT) this.identified.clear();
        this.identified.set(keyHash, { key, until: performance.now() + IDENTIFY_CACHE_MS });
        return key;
      })
      .finally(() => this.lookups.delete(keyHash));
    this.lookups.set(keyHash, lookup);
    return lookup;
  }

  charge(keyHash: string, endpoint: string, idempotencyRef?: string): Promise<DebitResult> {
    return this.ledger.debit(keyHash, endpoint, idempotencyRef);
  }

  recordOutcome(chargeId: number, status: number): void {
    this.ledger.recordOutcome(chargeId, status);
  }
}
