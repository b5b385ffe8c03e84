import { hash, randomBytes } from 'node:crypto';
import type { Clock } from './credit-service.js';
import type { KeyRecord, KeySettings, KeyStatus, Ledger, RefillChange, TopUpResult } from './ledger.js';
import type { RefillPlan } from './refills.js';

export const API_KEY_PATTERN = /^[0-9a-fA-F]{64}$/;

/** Hex is case-insensitive, so a key and its upper-case spelling hash alike. */
export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey.toLowerCase(), 'hex');
}

function newApiKey(): string {
  return randomBytes(32).toString('hex');
}

/** Key ids carry a prefix and 16 hex digits, so an id can never be mistaken for a 64-hex key. */
function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

const STATUS_ACTIONS: Record<KeyStatus, string> = { active: 'enable', disabled: 'disable', revoked: 'revoke' };

export type StatusChange =
  | { outcome: 'changed'; key: KeyRecord }
  | { outcome: 'unchanged'; key: KeyRecord }
  | { outcome: 'revoked'; key: KeyRecord }
  | { outcome: 'not-found' };

/** The longest grace period of a rolled key's former key: a week. */
export const MAX_ROLL_GRACE_SECONDS = 604_800;

export type RollOutcome =
  | { outcome: 'rolled'; key: string; record: KeyRecord; oldKeyValidUntil: string | null }
  | { outcome: 'not-found' }
  | { outcome: 'revoked'; record: KeyRecord };

export interface TopUpOptions {
  /** The payer's reference (an invoice, a payment), kept in the audit log. */
  reference?: string;
  idempotencyRef?: string;
  expiresAt?: string;
}

/** Where operator changes are reported, for the audit log: what was done, to which key, with which figures. */
export type ChangeReport = (action: string, keyId: string, detail: Record<string, unknown>) => Promise<void>;

const UNREPORTED: ChangeReport = async () => undefined;

/** Operator actions on keys, the one implementation behind the CLI and the admin API. */
export class KeyAdmin {
  constructor(
    private readonly ledger: Ledger,
    private readonly report: ChangeReport = UNREPORTED,
    private readonly clock: Clock = Date.now,
  ) {}

  /** `rateLimit`: requests per second for this key; null or absent for the service's default. */
  async create(credits: number, name = '', rateLimit: number | null = null): Promise<{ key: string; record: KeyRecord }> {
    const key = newApiKey();
    const record = await this.ledger.createKey({ keyHash: hashApiKey(key), id: newKeyId(), name, credits, rateLimit });
    await this.report('keys.create', record.id, { credits, name, rate: rateLimit });
    return { key, record };
  }

  /** Accepts a plain key (64 hex) or a key id. */
  async find(keyOrId: string): Promise<KeyRecord | undefined> {
    return API_KEY_PATTERN.test(keyOrId) ? this.ledger.findKeyByHash(hashApiKey(keyOrId)) : this.ledger.findKeyById(keyOrId);
  }

  /**
   * `expiresAt`: when what is left of these credits leaves the balance (any RFC 3339 time, later than
   * now); absent, they never expire. `idempotencyRef`: the claim of the request granting, so that a
   * retry of it never grants twice (Ledger.topUp).
   */
  async topUp(keyOrId: string, credits: number, options: TopUpOptions = {}): Promise<TopUpResult | { outcome: 'expiry-past' }> {
    const expiresAt = options.expiresAt === undefined ? null : new Date(options.expiresAt);
    if (expiresAt && !(expiresAt.getTime() > this.clock())) return { outcome: 'expiry-past' };
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    const result = await this.ledger.topUp(key.id, credits, { idempotencyRef: options.idempotencyRef, expiresAt: expiresAt?.toISOString() ?? null });
    if (result.outcome === 'topped-up') {
      await this.report('keys.topup', key.id, {
        credits,
        balance: result.key.balance,
        reference: options.reference ?? null,
        expires_at: expiresAt?.toISOString() ?? null,
      });
    }
    return result;
  }

  /**
   * A new plain key for the same id, balance and history. The former key keeps working for
   * `graceSeconds` (0 to MAX_ROLL_GRACE_SECONDS), so callers can switch without an outage.
   */
  async roll(keyOrId: string, graceSeconds: number): Promise<RollOutcome> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    const plain = newApiKey();
    const now = this.clock();
    const oldKeyValidUntil = graceSeconds > 0 ? new Date(now + graceSeconds * 1000).toISOString() : null;
    const result = await this.ledger.rollKey(key.id, hashApiKey(plain), oldKeyValidUntil, new Date(now).toISOString());
    if (result.outcome === 'not-found') return result;
    if (result.outcome === 'revoked') return { outcome: 'revoked', record: result.key };
    await this.report('keys.roll', key.id, { grace_seconds: graceSeconds, old_key_valid_until: oldKeyValidUntil });
    return { outcome: 'rolled', key: plain, record: result.key, oldKeyValidUntil };
  }

  async setRateLimit(keyOrId: string, rateLimit: number | null): Promise<KeyRecord | undefined> {
    const key = await this.find(keyOrId);
    const updated = key && (await this.ledger.setKeyRateLimit(key.id, rateLimit));
    if (updated) await this.report('keys.rate', updated.id, { rate: rateLimit });
    return updated;
  }

  /** Sets a key's refill plan, its first period granted at once; null ends it. */
  async setRefill(keyOrId: string, plan: RefillPlan | null): Promise<RefillChange> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    const change = await this.ledger.setRefill(key.id, plan, new Date(this.clock()).toISOString());
    if (change.outcome === 'set') await this.report('keys.refill', key.id, { plan, granted: change.refill?.credits ?? 0 });
    return change;
  }

  /** A key's own prices and low-balance mark (null returns each to the service's). */
  async updateSettings(keyOrId: string, settings: KeySettings): Promise<KeyRecord | undefined> {
    const key = await this.find(keyOrId);
    const updated = key && (await this.ledger.updateKeySettings(key.id, settings));
    if (updated) await this.report('keys.update', updated.id, { prices: settings.prices, low_balance_threshold: settings.lowBalanceThreshold });
    return updated;
  }

  async setStatus(keyOrId: string, status: KeyStatus): Promise<StatusChange> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    if (key.status === 'revoked') return status === 'revoked' ? { outcome: 'unchanged', key } : { outcome: 'revoked', key };
    if (key.status === status) return { outcome: 'unchanged', key };
    const updated = (await this.ledger.setKeyStatus(key.id, status)) as KeyRecord;
    await this.report(`keys.${STATUS_ACTIONS[status]}`, key.id, { status });
    return { outcome: 'changed', key: updated };
  }
}
