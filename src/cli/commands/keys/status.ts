import { KeyAdmin } from '../../../billing/key-admin.js';
import type { KeyRecord, KeyStatus } from '../../../billing/ledger.js';
import type { Store } from '../../../store/store.js';
import { CliError, notFound } from '../../errors.js';

/** revoke (permanent), disable and enable (reversible); `changed` is false when the key already had that status. */
export async function setKeyStatus(store: Store, keyOrId: string, status: KeyStatus): Promise<{ key: KeyRecord; changed: boolean }> {
  const change = await new KeyAdmin(store.ledger).setStatus(keyOrId, status);
  switch (change.outcome) {
    case 'not-found':
      throw notFound(keyOrId);
    case 'revoked':
      throw new CliError(`Key ${change.key.id} is revoked, which is permanent; create a new key instead.`);
    default:
      return { key: change.key, changed: change.outcome === 'changed' };
  }
}
