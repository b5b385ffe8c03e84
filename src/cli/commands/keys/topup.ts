import { KeyAdmin } from '../../../services/keys.js';
import type { KeyRecord, Store } from '../../../store/store.js';
import { CliError, parseCredits } from '../../errors.js';

export async function topUpKey(store: Store, keyOrId: string, options: { credits: string }): Promise<KeyRecord> {
  const credits = parseCredits(options.credits, 1);
  const key = await new KeyAdmin(store).topUp(keyOrId, credits);
  if (!key) throw new CliError(`No key matches "${keyOrId}" (give the plain key or its id, see "keys list").`);
  return key;
}
