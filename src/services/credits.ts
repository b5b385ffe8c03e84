import type { DebitResult, KeyRecord, Store } from '../store/store.js';
import { hashApiKey } from './keys.js';

export type Authentication =
  | { outcome: 'ok'; key: KeyRecord; keyHash: string }
  | { outcome: 'unknown-key' }
  | { outcome: 'inactive'; key: KeyRecord };

/** Authentication and the per-request charge, in terms of plain keys. */
export class CreditService {
  constructor(private readonly store: Store) {}

  async authenticate(apiKey: string): Promise<Authentication> {
    const keyHash = hashApiKey(apiKey);
    const key = await this.store.findKeyByHash(keyHash);
    if (!key) return { outcome: 'unknown-key' };
    if (key.status !== 'active') return { outcome: 'inactive', key };
    return { outcome: 'ok', key, keyHash };
  }

  charge(keyHash: string, endpoint: string): Promise<DebitResult> {
    return this.store.debit(keyHash, endpoint);
  }

  recordOutcome(chargeId: number, status: number): void {
    this.store.recordOutcome(chargeId, status);
  }
}
