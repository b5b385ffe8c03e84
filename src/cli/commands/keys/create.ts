import { KeyAdmin } from '../../../services/keys.js';
import type { Store } from '../../../store/store.js';
import { parseCredits } from '../../errors.js';

export interface CreatedKey {
  key: string;
  id: string;
  name: string;
  balance: number;
}

export async function createKey(store: Store, options: { credits: string; name?: string }): Promise<CreatedKey> {
  const credits = parseCredits(options.credits, 0);
  const { key, record } = await new KeyAdmin(store).create(credits, options.name ?? '');
  return { key, id: record.id, name: record.name, balance: record.balance };
}
