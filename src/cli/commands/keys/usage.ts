import { KeyAdmin } from '../../../billing/key-admin.js';
import type { ChargeRecord, CreditGrant, KeyRecord } from '../../../billing/ledger.js';
import type { Store } from '../../../store/store.js';
import { CliError, notFound } from '../../errors.js';

export interface KeyUsage {
  key: KeyRecord;
  granted: number;
  charged: number;
  grants: CreditGrant[];
  recentCharges: ChargeRecord[];
}

export async function keyUsage(store: Store, keyOrId: string, options: { limit?: string }): Promise<KeyUsage> {
  const key = await new KeyAdmin(store.ledger).find(keyOrId);
  if (!key) throw notFound(keyOrId);
  const limit = options.limit === undefined ? 20 : Number(options.limit);
  if (!Number.isSafeInteger(limit) || limit < 0) throw new CliError(`--limit must be an integer >= 0, got "${options.limit}"`);
  const [grants, charged, recentCharges] = await Promise.all([
    store.ledger.listGrants(key.id),
    store.ledger.countCharges(key.id),
    store.ledger.listCharges(key.id, limit),
  ]);
  return { key, granted: grants.reduce((sum, grant) => sum + grant.amount, 0), charged, grants, recentCharges };
}
