import type { DebitOptions, DebitResult } from './ledger.js';

export interface DebitJob {
  /** The key's hash; the key's id for a capped debit (Ledger.debitCapped). */
  keyHash: string;
  endpoint: string;
  idempotencyRef: string | null;
  /** Credits the request costs. */
  cost: number;
  /** When it is decided, ms since the epoch: spend caps' periods follow it. */
  at: number;
}

/** Runs one batch of debits in one transaction; results in the order of the jobs. */
export type RunDebits = (jobs: DebitJob[]) => DebitResult[] | Promise<DebitResult[]>;

interface Waiting {
  job: DebitJob;
  resolve: (result: DebitResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for both ledgers: the debits that arrive while none is being written go together
 * in the next batch, so one commit serves many requests and batches grow with load. One batch is
 * in flight at a time: on 2 cores shared with PostgreSQL that gave 23% more requests/s and a third
 * less database CPU per request than two. Each promise settles only after the commit that holds
 * its debit, so no response is sent before its charge is durable.
 */
export class DebitBatcher {
  private waiting: Waiting[] = [];
  private scheduled = false;
  private inFlight: Promise<void> | undefined;

  constructor(private readonly runDebits: RunDebits) {}

  submit(keyHash: string, endpoint: string, options: DebitOptions): Promise<DebitResult> {
    const job = { keyHash, endpoint, idempotencyRef: options.idempotencyRef ?? null, cost: options.cost ?? 1, at: options.at ?? Date.now() };
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, resolve, reject });
      this.schedule();
    });
  }

  /** Writes every debit submitted so far; resolves once they are all settled. */
  async drain(): Promise<void> {
    while (this.inFlight || this.waiting.length > 0) {
      if (this.inFlight) await this.inFlight;
      else this.runNext();
    }
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.inFlight) this.runNext();
    });
  }

  private runNext(): void {
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return;
    let results: DebitResult[] | Promise<DebitResult[]>;
    try {
      results = this.runDebits(batch.map((entry) => entry.job));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    if (!(results instanceof Promise)) {
      settle(batch, results);
      return;
    }
    this.inFlight = results.then(
      (settled) => settle(batch, settled),
      (error) => {
        for (const entry of batch) entry.reject(error);
      },
    );
    void this.inFlight.finally(() => {
      this.inFlight = undefined;
      if (this.waiting.length > 0) this.schedule();
    });
  }
}

function settle(batch: Waiting[], results: DebitResult[]): void {
  batch.forEach((entry, index) => {
    entry.resolve(results[index] as DebitResult);
  });
}

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
