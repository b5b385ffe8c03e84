import { KeyAdmin } from '../../../billing/key-admin.js';
import type { KeyRecord } from '../../../billing/ledger.js';
import type { Store } from '../../../store/store.js';
import { notFound, parseRate } from '../../errors.js';

export async function setKeyRate(store: Store, keyOrId: string, rate: string): Promise<KeyRecord> {
  const key = await new KeyAdmin(store.ledger).setRateLimit(keyOrId, parseRate(rate, true));
  if (!key) throw notFound(keyOrId);
  return key;
}
