import { MAX_BALANCE, type DebitResult, type KeyRecord, type KeyStatus, type TopUpResult } from '../store/store.js';

/** The positions of a batch's debits, grouped by key, in arrival order. */
export function positionsByKey(jobs: Array<{ keyHash: string }>): Map<string, number[]> {
  const positions = new Map<string, number[]>();
  jobs.forEach((job, index) => {
    const indexes = positions.get(job.keyHash);
    if (indexes) indexes.push(index);
    else positions.set(job.keyHash, [index]);
  });
  return positions;
}

/** Why a key took no credit: unknown, not active, or (active) at zero. */
export function refusalFor(status: KeyStatus | undefined): DebitResult {
  if (status === undefined) return { outcome: 'unknown-key' };
  if (status !== 'active') return { outcome: 'inactive', status };
  return { outcome: 'no-credits' };
}

/** Why a top-up of `amount` cannot be granted to this key (read inside the top-up's transaction), or undefined. */
export function topUpRefusal(key: KeyRecord | undefined, amount: number): Exclude<TopUpResult, { outcome: 'topped-up' }> | undefined {
  if (!key) return { outcome: 'not-found' };
  if (key.status === 'revoked') return { outcome: 'revoked', key };
  if (key.balance + amount > MAX_BALANCE) return { outcome: 'over-limit', key };
  return undefined;
}
