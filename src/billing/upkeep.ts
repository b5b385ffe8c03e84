import type { Clock } from './credit-service.js';
import type { Expiry, Ledger } from './ledger.js';

/** Expiries taken in one transaction each, this many per pass: a backlog is worked off pass by pass. */
const EXPIRIES_PER_PASS = 500;

/**
 * The ledger's timed work: what is left of expiring grants leaves the balance once their time has
 * come. Every instance runs it; each expiry still happens once (Ledger.expireDue).
 */
export class BillingUpkeep {
  constructor(
    private readonly ledger: Ledger,
    private readonly clock: Clock,
    private readonly onExpired: (expiries: Expiry[]) => void = () => undefined,
  ) {}

  /** One pass; resolves with what expired. */
  async runOnce(): Promise<Expiry[]> {
    const expired = await this.ledger.expireDue(new Date(this.clock()).toISOString(), EXPIRIES_PER_PASS);
    if (expired.length > 0) this.onExpired(expired);
    return expired;
  }
}
