import type Database from 'better-sqlite3';
import type { NewAuditEntry } from '../admin/admin-store.js';
import { prepareAuditInsert } from '../admin/sqlite-admin-store.js';
import type { IdempotencyEntry, StoredResponse } from '../idempotency/idempotency-store.js';
import { prepareCompletion } from '../idempotency/sqlite-idempotency.js';
import { type AccountRecord, type AccountRow, accountFromRow } from './accounts.js';
import type { ChangeRecord, KeyRecord } from './ledger.js';
import { type KeyRow, keyFromRow } from './ledger-rows.js';
import { changeWrites } from './ledger-rules.js';
import type { LedgerStatements, Prepared } from './sqlite-ledger-statements.js';

/**
 * How every part of the embedded ledger makes a change: one immediate transaction holding the
 * change and its record (audit entry, completed claim), after the ledger has forgotten what it
 * cached; and how they read a key or an account inside it.
 */
export class SqliteLedgerChanges {
  private readonly insertAudit: (entry: NewAuditEntry) => void;
  private readonly completeClaim: (entry: IdempotencyEntry, response: StoredResponse) => void;

  /** `forget`: drops the ledger's cached keys and balances, before every change. */
  constructor(
    private readonly db: Database.Database,
    private readonly sql: LedgerStatements,
    private readonly forget: () => void,
  ) {
    this.insertAudit = prepareAuditInsert(db);
    this.completeClaim = prepareCompletion(db);
  }

  keyBy(statement: Prepared, value: string): KeyRecord | undefined {
    const row = statement.get(value) as KeyRow | undefined;
    return row && keyFromRow(row);
  }

  accountBy(id: string): AccountRecord | undefined {
    const row = this.sql.accountById.get(id) as AccountRow | undefined;
    return row && accountFromRow(row);
  }

  /**
   * A change in an immediate transaction, with its record (audit entry, completed claim): all of it
   * commits, or none. The ledger forgets what it cached first.
   */
  write<T>(record: ChangeRecord<T> | undefined, change: () => T): Promise<T> {
    this.forget();
    return Promise.resolve(
      this.inTransaction(() => {
        const result = change();
        this.writeChange(record, result);
        return result;
      }),
    );
  }

  changeKey<T>(keyId: string, record: ChangeRecord<T> | undefined, change: (key: KeyRecord | undefined) => T): Promise<T> {
    return this.write(record, () => change(this.keyBy(this.sql.keyById, keyId)));
  }

  changeAccount<T>(accountId: string, record: ChangeRecord<T> | undefined, change: (account: AccountRecord | undefined) => T): Promise<T> {
    return this.write(record, () => change(this.accountBy(accountId)));
  }

  private writeChange<T>(record: ChangeRecord<T> | undefined, result: T): void {
    const { audit, completion } = changeWrites(record, result);
    if (audit) this.insertAudit(audit);
    if (completion) this.completeClaim(completion.entry, completion.response);
  }

  inTransaction<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }
}
