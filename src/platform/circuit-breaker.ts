/**
 * Circuit breaker for a downstream service (the face service, the embedding model; docs/api.md): after `failureThreshold`
 * consecutive failures it opens for `cooldownMs`, then admits a single probe request whose
 * outcome closes it again or re-opens it.
 */
export class CircuitBreaker {
  private consecutiveFailures = 0;
  private openedAt: number | undefined;
  private probeInFlight = false;

  constructor(
    private readonly failureThreshold: number,
    private readonly cooldownMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): 'closed' | 'open' | 'half-open' {
    if (this.openedAt === undefined) return 'closed';
    return this.now() - this.openedAt >= this.cooldownMs ? 'half-open' : 'open';
  }

  /** Whether a request may go downstream now; in half-open state only the first caller may. */
  tryAcquire(): boolean {
    const state = this.state;
    if (state === 'closed') return true;
    if (state === 'open' || this.probeInFlight) return false;
    this.probeInFlight = true;
    return true;
  }

  /** A request that acquired but never went downstream (for example it had no credits). */
  release(): void {
    this.probeInFlight = false;
  }

  recordSuccess(): void {
    this.consecutiveFailures = 0;
    this.openedAt = undefined;
    this.probeInFlight = false;
  }

  recordFailure(): void {
    this.consecutiveFailures++;
    if (this.probeInFlight || this.consecutiveFailures >= this.failureThreshold) this.openedAt = this.now();
    this.probeInFlight = false;
  }
}
