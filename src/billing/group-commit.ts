/**
 * Runs the writes that arrive in the same turn of the event loop in one transaction, so one
 * commit (one WAL append) serves many requests. Each caller's promise settles only after the
 * commit that holds its write, so no response is sent before its debit is durable.
 */
export class GroupCommit<Job, Result> {
  private pending: Array<{ job: Job; resolve: (result: Result) => void; reject: (error: unknown) => void }> = [];
  private scheduled = false;

  constructor(private readonly runBatch: (jobs: Job[]) => Result[]) {}

  submit(job: Job): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.pending.push({ job, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    let results: Result[];
    try {
      results = this.runBatch(batch.map((entry) => entry.job));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    batch.forEach((entry, index) => entry.resolve(results[index]!));
  }
}
