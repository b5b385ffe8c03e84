import type { Clock } from '../platform/clock.js';
import type { Expiry, KeyEnd, Ledger } from './ledger.js';
import type { Refill } from './refills.js';

/** What one pass did: grants expired, plans refilled, keys whose end was announced (key.expired). */
export interface UpkeepPass {
  expired: Expiry[];
  refilled: Refill[];
  keysEnded: KeyEnd[];
}

/** Expiries and refills made per pass, each in its own transaction: a backlog is worked off pass by pass. */
const CHANGES_PER_PASS = 500;

/**
 * The ledger's timed work: what is left of expiring grants leaves the balance once their time has
 * come, then refill plans whose period has begun are granted (a `replace` plan's last credits expire
 * first). Every instance runs it; each expiry and each period's refill still happens once.
 */
export class BillingUpkeep {
  constructor(
    private readonly ledger: Ledger,
    private readonly clock: Clock,
    private readonly report: (done: UpkeepPass) => void = () => undefined,
  ) {}

  /** One pass; resolves with what it did. */
  async runOnce(): Promise<UpkeepPass> {
    const now = new Date(this.clock()).toISOString();
    const expired = await this.ledger.expireDue(now, CHANGES_PER_PASS);
    const refilled = await this.ledger.refillDue(now, CHANGES_PER_PASS);
    const keysEnded = await this.ledger.announceExpiredKeys(now, CHANGES_PER_PASS);
    if (expired.length > 0 || refilled.length > 0 || keysEnded.length > 0) this.report({ expired, refilled, keysEnded });
    return { expired, refilled, keysEnded };
  }
}
