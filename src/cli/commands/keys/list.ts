import type { KeyRecord, Store } from '../../../store/store.js';

export function listKeys(store: Store): Promise<KeyRecord[]> {
  return store.listKeys();
}
