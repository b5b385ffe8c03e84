import type { PostgresDatabase } from '../platform/postgres-database.js';
import { type DebitJob, positionsByKey } from './debit-batcher.js';
import type { DebitResult, KeyStatus } from './ledger.js';
import { refusalFor } from './ledger-rules.js';

interface DebitedRow {
  key_hash: string;
  balance: number | null;
  granted: number | null;
  charge_ids: number[] | null;
  status: KeyStatus | null;
}

/**
 * A batch of one key's debits in one statement (debit_one_key): one conditional UPDATE of its
 * account taking what the balance covers, the charges of the requests it covered (the first
 * ones, in order), and why it took nothing. A batch of several keys goes to debit_batch, which
 * groups the debits by account, since keys of one account share its balance.
 */
export async function debitBatch(db: PostgresDatabase, jobs: DebitJob[], lowBalanceThreshold: number | null): Promise<DebitResult[]> {
  const positions = positionsByKey(jobs);
  if (positions.size > 1) return debitMixedBatch(db, jobs, lowBalanceThreshold);
  const totals = runningTotals(jobs);
  const costs = jobs.map((job) => job.cost);
  const uniformCost = costs.every((cost) => cost === costs[0]) ? costs[0] : null;
  const { rows } = await db.query<DebitedRow>(
    'SELECT key_hash, balance, granted, status, charge_ids FROM debit_one_key($1, $2, $3, $4, $5, $6, $7)',
    [jobs[0]?.keyHash, jobs.map((job) => job.endpoint), costs, totals, jobs.map((job) => job.idempotencyRef), lowBalanceThreshold, uniformCost],
    'debit-one-key',
  );
  const row = rows[0] as DebitedRow;
  const granted = row.granted ?? 0;
  // Charge ids come from one sequence in the order of the requests, which ORDER BY position fixes.
  const before = Number(row.balance) + (granted > 0 ? (totals[granted - 1] as number) : 0);
  const refusal = refusalFor(granted > 0 ? 'active' : (row.status ?? undefined));
  return jobs.map((_, index) =>
    index < granted ? { outcome: 'charged', balance: before - (totals[index] as number), chargeId: Number(row.charge_ids?.[index]) } : refusal,
  );
}

async function debitMixedBatch(db: PostgresDatabase, jobs: DebitJob[], lowBalanceThreshold: number | null): Promise<DebitResult[]> {
  const { rows } = await db.query<{ charge_id: string | null; balance: string | null; status: KeyStatus | null }>(
    'SELECT charge_id, balance, status FROM debit_batch($1, $2, $3, $4, $5)',
    [
      jobs.map((job) => job.keyHash),
      jobs.map((job) => job.endpoint),
      jobs.map((job) => job.cost),
      jobs.map((job) => job.idempotencyRef),
      lowBalanceThreshold,
    ],
    'debit-batch',
  );
  return rows.map((row) =>
    row.charge_id !== null
      ? { outcome: 'charged', balance: Number(row.balance), chargeId: Number(row.charge_id) }
      : refusalFor(row.status ?? undefined),
  );
}

/** Each debit's cost added up with those before it in the batch (one key's). */
function runningTotals(jobs: DebitJob[]): number[] {
  let total = 0;
  return jobs.map((job) => {
    total += job.cost;
    return total;
  });
}
