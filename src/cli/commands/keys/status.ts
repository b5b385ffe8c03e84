import { KeyAdmin } from '../../../services/keys.js';
import type { KeyRecord, KeyStatus, Store } from '../../../store/store.js';
import { CliError } from '../../errors.js';

/** revoke (permanent), disable and enable (reversible). */
export async function setKeyStatus(store: Store, keyOrId: string, status: KeyStatus): Promise<KeyRecord> {
  const change = await new KeyAdmin(store).setStatus(keyOrId, status);
  switch (change.outcome) {
    case 'not-found':
      throw new CliError(`No key matches "${keyOrId}" (give the plain key or its id, see "keys list").`);
    case 'revoked':
      throw new CliError(`Key ${change.key.id} is revoked, which is permanent; create a new key instead.`);
    default:
      return change.key;
  }
}
