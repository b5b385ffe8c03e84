import { KeyAdmin } from '../../../billing/key-admin.js';
import type { Store } from '../../../store/store.js';
import { parseCredits, parseRate } from '../../errors.js';

export interface CreatedKey {
  key: string;
  id: string;
  name: string;
  balance: number;
  rateLimit: number | null;
}

export async function createKey(store: Store, options: { credits: string; name?: string; rate?: string }): Promise<CreatedKey> {
  const credits = parseCredits(options.credits, 0);
  const rateLimit = options.rate === undefined ? null : parseRate(options.rate, false);
  const { key, record } = await new KeyAdmin(store.ledger).create(credits, options.name ?? '', rateLimit);
  return { key, id: record.id, name: record.name, balance: record.balance, rateLimit: record.rateLimit };
}
