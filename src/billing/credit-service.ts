import type { Clock } from '../platform/clock.js';
import { hashApiKey } from './keys.js';
import type { DebitOptions, DebitResult, KeyRecord, Ledger } from './ledger.js';
import { keyExpired } from './ledger-rules.js';
import { type CapReached, capPassed } from './spend-caps.js';

/** A key as presented: its record and the hash its debits go by (the current one, for a rolled key's former key). */
export interface Credential {
  key: KeyRecord;
  keyHash: string;
  /** When a rolled key's former key stops working (ms since the epoch); absent for the current key. */
  validUntil?: number;
}

export type Authentication =
  /** `former`: the key presented is a rolled key's former one, inside its grace period. */
  | { outcome: 'ok'; key: KeyRecord; keyHash: string; former: boolean }
  | { outcome: 'unknown-key' }
  | { outcome: 'inactive'; key: KeyRecord }
  /** Active, but its end (expires_at) has come. */
  | { outcome: 'expired'; key: KeyRecord };

/** How long `identify` may answer from memory: a set-rate reaches every instance within this. */
const IDENTIFY_CACHE_MS = 1000;
const IDENTIFY_CACHE_LIMIT = 100_000;

/** Authentication and the per-request charge, in terms of plain keys. */
export class CreditService {
  private readonly identified = new Map<string, { credential: Credential; until: number }>();
  private readonly lookups = new Map<string, Promise<Credential | undefined>>();

  constructor(
    private readonly ledger: Ledger,
    private readonly clock: Clock = Date.now,
  ) {}

  async authenticate(apiKey: string): Promise<Authentication> {
    const credential = await this.resolve(hashApiKey(apiKey));
    if (!credential) return { outcome: 'unknown-key' };
    if (credential.key.status !== 'active') return { outcome: 'inactive', key: credential.key };
    if (this.expired(credential.key)) return { outcome: 'expired', key: credential.key };
    return { outcome: 'ok', key: credential.key, keyHash: credential.keyHash, former: credential.validUntil !== undefined };
  }

  /** Whether the key's end (expires_at) has come: it is then refused like a disabled one. */
  expired(key: KeyRecord): boolean {
    return keyExpired(key, this.clock());
  }

  /**
   * The active key behind a presented hash, as known at most a second ago, or undefined. Not a
   * check of the key: on billable routes the debit itself refuses unknown and inactive keys,
   * atomically. Answers from memory without a promise when it can: this runs on every billable
   * request. When the entry has expired, the requests that arrive together share one lookup: under
   * load a busy key's requests otherwise all missed at the same moment, each asking the store.
   */
  identify(presentedHash: string): Credential | undefined | Promise<Credential | undefined> {
    const cached = this.identified.get(presentedHash);
    if (cached && cached.until > performance.now() && this.stillValid(cached.credential)) return cached.credential;
    const pending = this.lookups.get(presentedHash);
    if (pending) return pending;
    const lookup = this.resolve(presentedHash)
      .then((credential) => {
        if (credential?.key.status !== 'active') {
          this.identified.delete(presentedHash);
          return undefined;
        }
        if (this.identified.size >= IDENTIFY_CACHE_LIMIT) this.identified.clear();
        this.identified.set(presentedHash, { credential, until: performance.now() + IDENTIFY_CACHE_MS });
        return credential;
      })
      .finally(() => this.lookups.delete(presentedHash));
    this.lookups.set(presentedHash, lookup);
    return lookup;
  }

  /**
   * Spends the request's cost from the key with this hash. When no key has this hash as its current
   * one, it may be a rolled key's former key inside its grace period (or a key identified just
   * before a roll on another instance): the debit then goes to the key's current hash.
   */
  async charge(keyHash: string, endpoint: string, options: DebitOptions = {}): Promise<DebitResult> {
    const result = await this.ledger.debit(keyHash, endpoint, options);
    if (result.outcome !== 'unknown-key') return result;
    const rolled = await this.formerKey(keyHash);
    return rolled ? this.ledger.debit(rolled.keyHash, endpoint, options) : result;
  }

  /**
   * Spends the request's cost from a key with spend caps (Ledger.debitCapped): the caps are decided
   * in the debit's own transaction, by this service's clock. Keys without caps take `charge`, batched.
   */
  chargeCapped(key: KeyRecord, endpoint: string, options: DebitOptions = {}): Promise<DebitResult> {
    return this.ledger.debitCapped(key.id, endpoint, options, this.clock());
  }

  /**
   * The first of the key's spend caps, its own or its account's, that spending `cost` now would
   * pass, as the store knows their periods' spend; undefined when all leave room. A read ahead of
   * the debit, which still decides atomically.
   */
  async capPassedBy(key: KeyRecord, cost: number): Promise<CapReached | undefined> {
    const now = this.clock();
    const [own, shared] = await Promise.all([
      key.spendCaps ? this.ledger.capSpend(key.id, key.spendCaps, now) : [],
      key.accountSpendCaps ? this.ledger.capSpend(key.accountId, key.accountSpendCaps, now) : [],
    ]);
    const periods = [
      ...own.map((period) => ({ holder: 'key' as const, cap: period.cap, end: period.resetsAt, spent: period.spent })),
      ...shared.map((period) => ({ holder: 'account' as const, cap: period.cap, end: period.resetsAt, spent: period.spent })),
    ];
    return capPassed(periods, cost);
  }

  /** This service's time, ms since the epoch. */
  now(): number {
    return this.clock();
  }

  /** Forgets what this instance remembers of a key, so that an operator's change to it applies here at once. */
  forget(keyId: string): void {
    for (const [hash, cached] of this.identified) if (cached.credential.key.id === keyId) this.identified.delete(hash);
  }

  recordOutcome(chargeId: number, status: number): void {
    this.ledger.recordOutcome(chargeId, status);
  }

  /** The key a hash stands for now: its current hash, or a rolled key's former hash inside its grace period. */
  private async resolve(presentedHash: string): Promise<Credential | undefined> {
    const key = await this.ledger.findKeyByHash(presentedHash);
    return key ? { key, keyHash: presentedHash } : this.formerKey(presentedHash);
  }

  /** The key a rolled key's former hash stands for, while its grace period lasts. */
  private async formerKey(formerHash: string): Promise<Credential | undefined> {
    const retired = await this.ledger.findRetiredKey(formerHash);
    if (!retired) return undefined;
    const credential = { key: retired.key, keyHash: retired.keyHash, validUntil: Date.parse(retired.validUntil) };
    return this.stillValid(credential) ? credential : undefined;
  }

  private stillValid(credential: Credential): boolean {
    return credential.validUntil === undefined || credential.validUntil > this.clock();
  }
}
