import type { DebitResult, KeyStatus } from './store.js';

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
