import type { PostgresDatabase } from '../platform/postgres-database.js';
import { refuseUnstorable } from '../platform/store-faults.js';
import {
  ACCOUNT_COLUMNS,
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
import { KEY_COLUMNS, KEYS_WITH_ACCOUNTS, type KeyRow, keyCursorPlace, keyFromRow } from './ledger-rows.js';
import { accountTopUpRefusal } from './ledger-rules.js';
import { recountCaps } from './postgres-capped-debits.js';
import { grant, setRefill } from './postgres-credits.js';
import { accountById, changeAccount, grantedBefore, json, updateAccountRow, writeChange } from './postgres-ledger-changes.js';
import type { RefillPlan } from './refills.js';

/** The shared ledger's accounts: created, found, listed, changed, topped up and given refill plans. */
export class PostgresAccounts implements AccountLedger {
  constructor(private readonly db: PostgresDatabase) {}

  async createAccount(input: NewAccount, record?: ChangeRecord<AccountCreation>): Promise<AccountCreation> {
    refuseUnstorable({ name: input.name, external_id: input.externalId, metadata: input.metadata });
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<AccountRow>(
        `INSERT INTO accounts (id, name, external_id, metadata, balance, spend_caps) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (external_id) DO NOTHING RETURNING ${ACCOUNT_COLUMNS}`,
        [input.id, input.name, input.externalId ?? null, json(input.metadata), input.credits, json(input.spendCaps)],
      );
      let result: AccountCreation;
      if (rows[0]) {
        await client.query(`INSERT INTO credit_grants (account_id, amount, reason) VALUES ($1, $2, 'create')`, [input.id, input.credits]);
        result = { outcome: 'created', account: accountFromRow(rows[0]) };
      } else {
        const taken = await client.query<{ id: string }>('SELECT id FROM accounts WHERE external_id = $1', [input.externalId]);
        result = { outcome: 'external-id-taken', accountId: taken.rows[0]?.id ?? '' };
      }
      await writeChange(client, record, result);
      return result;
    });
  }

  async findAccount(id: string): Promise<AccountRecord | undefined> {
    return accountById(this.db, id);
  }

  /** Ordered by creation to the millisecond, as the cursor holds it (PostgreSQL keeps microseconds). */
  async listAccountsPage(query: AccountQuery): Promise<{ accounts: AccountRecord[]; nextCursor: string | null }> {
    const after = query.cursor === null ? undefined : keyCursorPlace(query.cursor);
    const { rows } = await this.db.query<AccountRow>(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts
       WHERE ($1::text IS NULL OR external_id = $1) AND ($2::text IS NULL OR strpos(lower(name), lower($2)) > 0)
         AND ($3::timestamptz IS NULL OR (date_trunc('milliseconds', created_at), id) < ($3::timestamptz, $4))
       ORDER BY date_trunc('milliseconds', created_at) DESC, id DESC LIMIT $5`,
      [query.externalId ?? null, query.nameContains ?? null, after?.createdAt ?? null, after?.id ?? '', query.limit + 1],
    );
    return accountPage(rows.map(accountFromRow), query.limit);
  }

  async accountKeys(accountId: string): Promise<KeyRecord[]> {
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM ${KEYS_WITH_ACCOUNTS} WHERE k.account_id = $1 ORDER BY k.created_at, k.id`,
      [accountId],
    );
    return rows.map(keyFromRow);
  }

  async updateAccount(accountId: string, settings: AccountSettings, record?: ChangeRecord<AccountUpdate>): Promise<AccountUpdate> {
    refuseUnstorable({ name: settings.name, external_id: settings.externalId, metadata: settings.metadata });
    return changeAccount(this.db, accountId, record, async (client, account): Promise<AccountUpdate> => {
      if (!account) return { outcome: 'not-found' };
      if (settings.externalId) {
        const taken = await client.query<{ id: string }>('SELECT id FROM accounts WHERE external_id = $1 AND id <> $2', [
          settings.externalId,
          accountId,
        ]);
        if (taken.rows[0]) return { outcome: 'external-id-taken', accountId: taken.rows[0].id };
      }
      await updateAccountRow(client, accountId, settings);
      if (settings.spendCaps !== undefined) await recountCaps(client, 'account', accountId, settings.spendCaps, Date.now());
      return { outcome: 'changed', account: (await accountById(client, accountId)) as AccountRecord };
    });
  }

  async topUpAccount(
    accountId: string,
    amount: number,
    options: GrantOptions = {},
    record?: ChangeRecord<AccountTopUpResult>,
  ): Promise<AccountTopUpResult> {
    return changeAccount(this.db, accountId, record, async (client, account): Promise<AccountTopUpResult> => {
      if (account && options.idempotencyRef !== undefined && (await grantedBefore(client, options.idempotencyRef)))
        return { outcome: 'granted-before', account };
      const refusal = accountTopUpRefusal(account, amount);
      if (refusal) return refusal;
      await grant(client, { accountId }, amount, 'topup', options);
      return { outcome: 'topped-up', account: (await accountById(client, accountId)) as AccountRecord };
    });
  }

  async setAccountRefill(
    accountId: string,
    plan: RefillPlan | null,
    now: string,
    record?: ChangeRecord<AccountRefillChange>,
  ): Promise<AccountRefillChange> {
    return changeAccount(this.db, accountId, record, async (client, account): Promise<AccountRefillChange> => {
      if (!account) return { outcome: 'not-found' };
      const change = await setRefill(client, accountId, plan, now);
      return { outcome: 'set', ...change, balance: change.refill?.balance ?? account.balance };
    });
  }
}
