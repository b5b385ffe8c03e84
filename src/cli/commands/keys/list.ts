import type { KeyRecord } from '../../../billing/ledger.js';
import type { Store } from '../../../store/store.js';

export function listKeys(store: Store): Promise<KeyRecord[]> {
  return store.ledger.listKeys();
}
