import { refuseUnstorable } from '../platform/store-faults.js';
import {
  type AccountCreation,
  type AccountQuery,
  type AccountRecord,
  type AccountRow,
  type AccountSettings,
  type AccountTopUpResult,
  type AccountUpdate,
  accountFromRow,
  accountPage,
  type NewAccount,
} from './accounts.js';
import type { AccountLedger, AccountRefillChange, ChangeRecord, GrantOptions, KeyRecord } from './ledger.js';
import { type KeyRow, keyCursorPlace, keyFromRow } from './ledger-rows.js';
import { accountTopUpRefusal } from './ledger-rules.js';
import type { RefillPlan } from './refills.js';
import { recountCaps } from './sqlite-capped-debits.js';
import type { SqliteCredits } from './sqlite-credits.js';
import type { SqliteLedgerChanges } from './sqlite-ledger-changes.js';
import { json, type LedgerStatements, setting } from './sqlite-ledger-statements.js';

/** The embedded ledger's accounts: created, found, listed, changed, topped up and given refill plans. */
export class SqliteAccounts implements AccountLedger {
  constructor(
    private readonly sql: LedgerStatements,
    private readonly changes: SqliteLedgerChanges,
    private readonly credits: SqliteCredits,
  ) {}

  async createAccount(input: NewAccount, record?: ChangeRecord<AccountCreation>): Promise<AccountCreation> {
    refuseUnstorable({ name: input.name, external_id: input.externalId, metadata: input.metadata });
    const createdAt = new Date().toISOString();
    return this.changes.write(record, (): AccountCreation => {
      const taken = input.externalId ? (this.sql.accountByExternalId.get(input.externalId) as { id: string } | undefined) : undefined;
      if (taken) return { outcome: 'external-id-taken', accountId: taken.id };
      this.sql.insertAccount.run(
        input.id,
        input.name,
        input.externalId ?? null,
        json(input.metadata),
        input.credits,
        json(input.spendCaps),
        createdAt,
      );
      this.sql.insertCreateGrant.run(input.id, input.credits, createdAt);
      return { outcome: 'created', account: this.changes.accountBy(input.id) as AccountRecord };
    });
  }

  async findAccount(id: string): Promise<AccountRecord | undefined> {
    return this.changes.accountBy(id);
  }

  async listAccountsPage(query: AccountQuery): Promise<{ accounts: AccountRecord[]; nextCursor: string | null }> {
    const after = query.cursor === null ? undefined : keyCursorPlace(query.cursor);
    const rows = this.sql.accountsPage.all({
      externalId: query.externalId ?? null,
      nameContains: query.nameContains ?? null,
      afterAt: after?.createdAt ?? null,
      afterId: after?.id ?? '',
      limit: query.limit + 1,
    }) as AccountRow[];
    return accountPage(rows.map(accountFromRow), query.limit);
  }

  async accountKeys(accountId: string): Promise<KeyRecord[]> {
    return (this.sql.accountKeys.all(accountId) as KeyRow[]).map(keyFromRow);
  }

  async updateAccount(accountId: string, settings: AccountSettings, record?: ChangeRecord<AccountUpdate>): Promise<AccountUpdate> {
    refuseUnstorable({ name: settings.name, external_id: settings.externalId, metadata: settings.metadata });
    return this.changes.changeAccount(accountId, record, (account): AccountUpdate => {
      if (!account) return { outcome: 'not-found' };
      const taken = settings.externalId ? (this.sql.accountByExternalId.get(settings.externalId) as { id: string } | undefined) : undefined;
      if (taken && taken.id !== accountId) return { outcome: 'external-id-taken', accountId: taken.id };
      this.sql.updateAccount.run({
        accountId,
        ...setting('Name', 'name', settings.name),
        ...setting('ExternalId', 'externalId', settings.externalId),
        ...setting('Metadata', 'metadata', settings.metadata === undefined ? undefined : json(settings.metadata)),
        ...setting('Prices', 'prices', settings.prices === undefined ? undefined : json(settings.prices)),
        ...setting('Threshold', 'threshold', settings.lowBalanceThreshold),
        ...setting('Caps', 'caps', settings.spendCaps === undefined ? undefined : json(settings.spendCaps)),
      });
      if (settings.spendCaps !== undefined) recountCaps(this.sql, 'account', accountId, settings.spendCaps, Date.now());
      return { outcome: 'changed', account: this.changes.accountBy(accountId) as AccountRecord };
    });
  }

  async topUpAccount(
    accountId: string,
    amount: number,
    options: GrantOptions = {},
    record?: ChangeRecord<AccountTopUpResult>,
  ): Promise<AccountTopUpResult> {
    return this.changes.changeAccount(accountId, record, (account): AccountTopUpResult => {
      if (account && options.idempotencyRef !== undefined && this.credits.grantedBefore(options.idempotencyRef))
        return { outcome: 'granted-before', account };
      const refusal = accountTopUpRefusal(account, amount);
      if (refusal) return refusal;
      this.credits.grant({ accountId }, amount, 'topup', options);
      return { outcome: 'topped-up', account: this.changes.accountBy(accountId) as AccountRecord };
    });
  }

  async setAccountRefill(
    accountId: string,
    plan: RefillPlan | null,
    now: string,
    record?: ChangeRecord<AccountRefillChange>,
  ): Promise<AccountRefillChange> {
    return this.changes.changeAccount(accountId, record, (account): AccountRefillChange => {
      if (!account) return { outcome: 'not-found' };
      const change = this.credits.setRefill(accountId, plan, now);
      return { outcome: 'set', ...change, balance: change.refill?.balance ?? account.balance };
    });
  }
}
