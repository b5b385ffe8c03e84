import { KeyAdmin } from '../../../billing/key-admin.js';
import type { KeyRecord, Store } from '../../../store/store.js';
import { notFound, parseRate } from '../../errors.js';

export async function setKeyRate(store: Store, keyOrId: string, rate: string): Promise<KeyRecord> {
  const key = await new KeyAdmin(store).setRateLimit(keyOrId, parseRate(rate, true));
  if (!key) throw notFound(keyOrId);
  return key;
}
