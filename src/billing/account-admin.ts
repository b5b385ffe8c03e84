import type { Clock } from '../platform/clock.js';
import { type AccountCreation, type AccountSettings, type AccountTopUpResult, type AccountUpdate, newAccountId } from './accounts.js';
import type { Actor, Answering, TopUpOptions } from './key-admin.js';
import type { AccountRefillChange, ChangeRecord, Ledger, NewKey } from './ledger.js';
import type { RefillPlan } from './refills.js';

/** An account top-up's outcome: the ledger's, or refused before it since its expiry is not in the future. */
export type AccountTopUpOutcome = AccountTopUpResult | { outcome: 'expiry-past' };

type Described = { action: string; detail: Record<string, unknown> } | undefined;

/** Operator actions on accounts, the one implementation behind the CLI and the admin API; each audited with the account as target. */
export class AccountAdmin {
  constructor(
    private readonly ledger: Ledger,
    private readonly actor: Actor | null = null,
    private readonly clock: Clock = Date.now,
  ) {}

  async create(
    input: { name: string; externalId?: string | null; metadata?: Record<string, unknown> | null; credits?: number } & Pick<NewKey, 'spendCaps'>,
  ): Promise<AccountCreation> {
    const id = newAccountId();
    const credits = input.credits ?? 0;
    return this.ledger.createAccount(
      { id, name: input.name, externalId: input.externalId, metadata: input.metadata, credits, spendCaps: input.spendCaps },
      this.recorded(id, (result) =>
        result.outcome === 'created'
          ? {
              action: 'accounts.create',
              detail: { name: input.name, external_id: input.externalId ?? null, credits, spend_caps: input.spendCaps ?? null },
            }
          : undefined,
      ),
    );
  }

  async update(accountId: string, settings: AccountSettings): Promise<AccountUpdate> {
    const detail = {
      name: settings.name,
      external_id: settings.externalId,
      prices: settings.prices,
      low_balance_threshold: settings.lowBalanceThreshold,
      spend_caps: settings.spendCaps,
      ...(settings.metadata !== undefined && { metadata_changed: true }),
    };
    return this.ledger.updateAccount(
      accountId,
      settings,
      this.recorded(accountId, (result) => (result.outcome === 'changed' ? { action: 'accounts.update', detail } : undefined)),
    );
  }

  /** As KeyAdmin.topUp, to an account. */
  async topUp(
    accountId: string,
    credits: number,
    options: TopUpOptions = {},
    answering?: Answering<AccountTopUpOutcome>,
  ): Promise<AccountTopUpOutcome> {
    const expiresAt = options.expiresAt === undefined ? null : new Date(options.expiresAt).toISOString();
    if (expiresAt !== null && !(Date.parse(expiresAt) > this.clock())) return { outcome: 'expiry-past' };
    const detail = { credits, reference: options.reference ?? null, expires_at: expiresAt };
    return this.ledger.topUpAccount(
      accountId,
      credits,
      { idempotencyRef: options.idempotencyRef, expiresAt },
      this.recorded(
        accountId,
        (result) =>
          result.outcome === 'topped-up' ? { action: 'accounts.topup', detail: { ...detail, balance: result.account.balance } } : undefined,
        answering,
      ),
    );
  }

  /** As KeyAdmin.setRefill, for an account. */
  async setRefill(accountId: string, plan: RefillPlan | null, answering?: Answering<AccountRefillChange>): Promise<AccountRefillChange> {
    const describe = (change: AccountRefillChange): Described => {
      if (change.outcome !== 'set' || !change.changed) return undefined;
      const refill = change.refill;
      return {
        action: 'accounts.refill',
        detail: { plan, granted: refill?.credits ?? 0, ...(refill && refill.credits < refill.planned && { planned: refill.planned }) },
      };
    };
    return this.ledger.setAccountRefill(accountId, plan, new Date(this.clock()).toISOString(), this.recorded(accountId, describe, answering));
  }

  private recorded<Result>(accountId: string, describe: (result: Result) => Described, answering?: Answering<Result>): ChangeRecord<Result> {
    const actor = this.actor;
    return {
      audit: (result) => {
        const described = actor ? describe(result) : undefined;
        if (!actor || !described) return undefined;
        return { actor: actor.name, action: described.action, target: accountId, requestId: actor.requestId, detail: described.detail };
      },
      claim: answering,
    };
  }
}
