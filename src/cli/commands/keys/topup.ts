import { KeyAdmin } from '../../../billing/key-admin.js';
import { type KeyRecord, MAX_BALANCE } from '../../../billing/ledger.js';
import type { Store } from '../../../store/store.js';
import { CliError, notFound, parseCredits } from '../../errors.js';

export async function topUpKey(store: Store, keyOrId: string, options: { credits: string }): Promise<KeyRecord> {
  const credits = parseCredits(options.credits, 1);
  const result = await new KeyAdmin(store.ledger).topUp(keyOrId, credits);
  switch (result.outcome) {
    case 'not-found':
      throw notFound(keyOrId);
    case 'revoked':
      throw new CliError(`Key ${result.key.id} is revoked, which is permanent: it cannot be topped up. Create a new key instead.`);
    case 'over-limit':
      throw new CliError(
        `Key ${result.key.id} holds ${result.key.balance} credits; adding ${credits} would pass the most a key may hold (${MAX_BALANCE}). Nothing was added.`,
      );
    case 'topped-up':
      return result.key;
  }
}
