/** A charge's id and the HTTP status its request ended with. */
export type ChargeOutcome = [chargeId: number, status: number];

const FLUSH_MS = 50;
const RETRY_MS = 1000;

/**
 * Collects the final statuses of charged requests and writes them in batches, off the request
 * path, for both ledgers. A ledger may also take the pending outcomes into a transaction of its
 * own (a debit batch) and give them back if that fails. Outcomes that cannot be written (the
 * database away, a full disk) wait for the next try.
 */
export class OutcomeWriter {
  private pending: ChargeOutcome[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly write: (outcomes: ChargeOutcome[]) => void | Promise<void>) {}

  record(chargeId: number, status: number): void {
    this.pending.push([chargeId, status]);
    this.schedule(FLUSH_MS);
  }

  /** Hands over the pending outcomes, first per charge only; `giveBack` them if they were not written. */
  take(): ChargeOutcome[] {
    const taken = this.pending;
    this.pending = [];
    return firstPerCharge(taken);
  }

  giveBack(outcomes: ChargeOutcome[]): void {
    this.pending = outcomes.concat(this.pending);
  }

  /** Writes what is pending now; on failure keeps it pending and tries again later. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const outcomes = this.take();
    if (outcomes.length === 0) return;
    try {
      await this.write(outcomes);
    } catch {
      this.giveBack(outcomes);
      this.schedule(RETRY_MS);
    }
  }

  /** A last flush; nothing is retried after it. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    clearTimeout(this.timer);
  }

  private schedule(delay: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => void this.flush(), delay).unref();
  }
}

/** The first outcome recorded for a charge wins, as the database's "IS NULL" guard ensures across batches. */
function firstPerCharge(outcomes: ChargeOutcome[]): ChargeOutcome[] {
  return [...new Map([...outcomes].reverse()).entries()];
}
