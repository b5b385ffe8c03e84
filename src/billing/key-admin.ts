import { randomBytes } from 'node:crypto';
import type { Clock } from '../platform/clock.js';
import { MAX_BALANCE } from '../rules.js';
import type { KeyAccount } from './accounts.js';
import { API_KEY_PATTERN, hashApiKey, newKeyId } from './keys.js';
import type { ChangeRecord, KeyRecord, KeySettings, KeyStatus, Ledger, NewKey, RefillChange, RollResult, TopUpResult } from './ledger.js';
import type { RefillPlan } from './refills.js';

function newApiKey(): string {
  return randomBytes(32).toString('hex');
}

const STATUS_ACTIONS: Record<KeyStatus, string> = { active: 'enable', disabled: 'disable', revoked: 'revoke' };

/** A change of a key's rate or settings: refused on a revoked key, like every other change. */
export type SettingsChange = { outcome: 'changed'; key: KeyRecord } | { outcome: 'revoked'; key: KeyRecord } | { outcome: 'not-found' };

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

/** A top-up's outcome: the ledger's, or refused before it since its expiry is not in the future. */
export type TopUpOutcome = TopUpResult | { outcome: 'expiry-past' };

/** Who makes operator changes, for the audit log: an admin token's name, `cli` or `stripe`, and the HTTP request; null: unaudited. */
export interface Actor {
  name: string;
  requestId: string | null;
}

/** The idempotent request making a change: its claim is completed with the answer, in the change's transaction. */
export type Answering<Result> = ChangeRecord<Result>['claim'];

type Described = { action: string; keyId: string; detail: Record<string, unknown> } | undefined;

/** Operator actions on keys, the one implementation behind the CLI and the admin API. */
export class KeyAdmin {
  /**
   * `acceptsPlainKeys`: keys may be named by the plain key as well as by id, as on the command line
   * of the service's machine; the admin API names them by id only, so no URL ever carries a secret.
   */
  constructor(
    private readonly ledger: Ledger,
    private readonly actor: Actor | null = null,
    private readonly clock: Clock = Date.now,
    private readonly acceptsPlainKeys = false,
  ) {}

  /** A key with an account of its own holding `credits`. `rateLimit`: requests per second for this key; null or absent for the service's default. */
  async create(
    credits: number,
    name = '',
    rateLimit: number | null = null,
    life: Pick<NewKey, 'expiresAt' | 'metadata' | 'spendCaps'> = {},
  ): Promise<{ key: string; record: KeyRecord }> {
    return this.createIn({ ownAccount: true }, credits, name, rateLimit, life);
  }

  /** A key of an existing account (accounts are never deleted), `credits` granted to the account. */
  async createInAccount(
    accountId: string,
    credits: number,
    name = '',
    rateLimit: number | null = null,
    life: Pick<NewKey, 'expiresAt' | 'metadata' | 'spendCaps'> = {},
  ): Promise<{ outcome: 'created'; key: string; record: KeyRecord } | { outcome: 'not-found' } | { outcome: 'over-limit'; balance: number }> {
    const account = await this.ledger.findAccount(accountId);
    if (!account) return { outcome: 'not-found' };
    if (account.balance + credits > MAX_BALANCE) return { outcome: 'over-limit', balance: account.balance };
    return { outcome: 'created', ...(await this.createIn({ accountId }, credits, name, rateLimit, life)) };
  }

  private async createIn(
    account: KeyAccount,
    credits: number,
    name: string,
    rateLimit: number | null,
    life: Pick<NewKey, 'expiresAt' | 'metadata' | 'spendCaps'>,
  ): Promise<{ key: string; record: KeyRecord }> {
    const key = newApiKey();
    const detail = {
      credits,
      name,
      rate: rateLimit,
      ...(life.expiresAt && { expires_at: life.expiresAt }),
      ...(life.spendCaps && { spend_caps: life.spendCaps }),
    };
    const record = await this.ledger.createKey(
      { keyHash: hashApiKey(key), id: newKeyId(), name, credits, rateLimit, account, ...life },
      this.recorded((created) => ({ action: 'keys.create', keyId: created.id, detail: { ...detail, account_id: created.accountId } })),
    );
    return { key, record };
  }

  /** The key with this id; or with this plain key (64 hex), where plain keys are accepted. */
  async find(keyOrId: string): Promise<KeyRecord | undefined> {
    if (this.acceptsPlainKeys && API_KEY_PATTERN.test(keyOrId)) return this.ledger.findKeyByHash(hashApiKey(keyOrId));
    return this.ledger.findKeyById(keyOrId);
  }

  /**
   * `expiresAt`: when what is left of these credits leaves the balance (any RFC 3339 time, later than
   * now); absent, they never expire. `idempotencyRef`: the claim of the request granting, so that a
   * retry of it never grants twice (Ledger.topUp).
   */
  async topUp(keyOrId: string, credits: number, options: TopUpOptions = {}, answering?: Answering<TopUpOutcome>): Promise<TopUpOutcome> {
    const expiresAt = options.expiresAt === undefined ? null : new Date(options.expiresAt).toISOString();
    if (expiresAt !== null && !(Date.parse(expiresAt) > this.clock())) return { outcome: 'expiry-past' };
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    const detail = { credits, reference: options.reference ?? null, expires_at: expiresAt };
    return this.ledger.topUp(
      key.id,
      credits,
      { idempotencyRef: options.idempotencyRef, expiresAt },
      this.recorded(
        (result) =>
          result.outcome === 'topped-up' ? { action: 'keys.topup', keyId: key.id, detail: { ...detail, balance: result.key.balance } } : undefined,
        answering,
      ),
    );
  }

  /**
   * A new plain key for the same id, balance and history. The former key keeps working for
   * `graceSeconds` (0 to MAX_ROLL_GRACE_SECONDS), so callers can switch without an outage.
   */
  async roll(keyOrId: string, graceSeconds: number, answering?: Answering<RollOutcome>): Promise<RollOutcome> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    const plain = newApiKey();
    const now = this.clock();
    const oldKeyValidUntil = graceSeconds > 0 ? new Date(now + graceSeconds * 1000).toISOString() : null;
    const outcomeOf = (result: RollResult): RollOutcome => {
      if (result.outcome === 'not-found') return result;
      if (result.outcome === 'revoked') return { outcome: 'revoked', record: result.key };
      return { outcome: 'rolled', key: plain, record: result.key, oldKeyValidUntil };
    };
    const detail = { grace_seconds: graceSeconds, old_key_valid_until: oldKeyValidUntil };
    const result = await this.ledger.rollKey(
      key.id,
      hashApiKey(plain),
      oldKeyValidUntil,
      new Date(now).toISOString(),
      this.recorded(
        (rolled) => (rolled.outcome === 'rolled' ? { action: 'keys.roll', keyId: key.id, detail } : undefined),
        answering && { entry: answering.entry, answer: (rolled) => answering.answer(outcomeOf(rolled)) },
      ),
    );
    return outcomeOf(result);
  }

  /** A revoked key is closed for good: its rate is not changed either. */
  async setRateLimit(keyOrId: string, rateLimit: number | null): Promise<SettingsChange> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    if (key.status === 'revoked') return { outcome: 'revoked', key };
    const updated = await this.ledger.setKeyRateLimit(
      key.id,
      rateLimit,
      this.recorded(() => ({ action: 'keys.rate', keyId: key.id, detail: { rate: rateLimit } })),
    );
    return updated ? { outcome: 'changed', key: updated } : { outcome: 'not-found' };
  }

  /**
   * Sets a key's refill plan; null ends it. A new plan's first period is granted at once, or when the
   * period its refills already paid for ends; the plan a key follows already changes nothing.
   */
  async setRefill(keyOrId: string, plan: RefillPlan | null, answering?: Answering<RefillChange>): Promise<RefillChange> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    const describe = (change: RefillChange): Described => {
      if (change.outcome !== 'set' || !change.changed) return undefined;
      const refill = change.refill;
      const detail = { plan, granted: refill?.credits ?? 0, ...(refill && refill.credits < refill.planned && { planned: refill.planned }) };
      return { action: 'keys.refill', keyId: key.id, detail };
    };
    return this.ledger.setRefill(key.id, plan, new Date(this.clock()).toISOString(), this.recorded(describe, answering));
  }

  /** A key's end, metadata and caps, and its account's prices and low-balance mark (null returns each to the service's); not on a revoked key. */
  async updateSettings(keyOrId: string, settings: KeySettings): Promise<SettingsChange> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    if (key.status === 'revoked') return { outcome: 'revoked', key };
    const detail = {
      prices: settings.prices,
      low_balance_threshold: settings.lowBalanceThreshold,
      expires_at: settings.expiresAt,
      spend_caps: settings.spendCaps,
      ...(settings.metadata !== undefined && { metadata_changed: true }),
    };
    const updated = await this.ledger.updateKeySettings(
      key.id,
      settings,
      this.recorded(() => ({ action: 'keys.update', keyId: key.id, detail })),
    );
    return updated ? { outcome: 'changed', key: updated } : { outcome: 'not-found' };
  }

  async setStatus(keyOrId: string, status: KeyStatus): Promise<StatusChange> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    if (key.status === 'revoked') return status === 'revoked' ? { outcome: 'unchanged', key } : { outcome: 'revoked', key };
    if (key.status === status) return { outcome: 'unchanged', key };
    const action = `keys.${STATUS_ACTIONS[status]}`;
    const updated = (await this.ledger.setKeyStatus(
      key.id,
      status,
      this.recorded(() => ({ action, keyId: key.id, detail: { status } })),
    )) as KeyRecord;
    return { outcome: 'changed', key: updated };
  }

  /** The change's record: its audit entry by this actor (none without one), and the claim it answers. */
  private recorded<Result>(describe: (result: Result) => Described, answering?: Answering<Result>): ChangeRecord<Result> {
    const actor = this.actor;
    return {
      audit: (result) => {
        const described = actor ? describe(result) : undefined;
        if (!actor || !described) return undefined;
        return { actor: actor.name, action: described.action, target: described.keyId, requestId: actor.requestId, detail: described.detail };
      },
      claim: answering,
    };
  }
}
