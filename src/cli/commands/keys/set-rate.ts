import { KeyAdmin } from '../../../services/keys.js';
import type { KeyRecord, Store } from '../../../store/store.js';
import { CliError, parseRate } from '../../errors.js';

export async function setKeyRate(store: Store, keyOrId: string, rate: string): Promise<KeyRecord> {
  const key = await new KeyAdmin(store).setRateLimit(keyOrId, parseRate(rate, true));
  if (!key) throw new CliError(`No key matches "${keyOrId}" (give the plain key or its id, see "keys list").`);
  return key;
}
