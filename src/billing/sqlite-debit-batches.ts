import type Database from 'better-sqlite3';
import { type DebitJob, positionsByKey } from './debit-batcher.js';
import type { DebitResult, KeyStatus } from './ledger.js';
import { refusalFor } from './ledger-rules.js';
import type { ChargeOutcome } from './outcome-writer.js';
import type { SqliteCredits } from './sqlite-credits.js';
import type { DebitedRow, LedgerStatements } from './sqlite-ledger-statements.js';

/** Rows per multi-row statement: SQLite binds at most 32,766 parameters, and a few dozen rows take most of the gain. */
const MULTI_ROW_CHUNK = 64;

/**
 * The embedded ledger's debits of keys without caps and the outcomes of charged requests, each
 * written inside the transaction the ledger holds (SqliteLedger.runDebits): a batch of debits in
 * a statement per account, and its charges and outcomes in multi-row statements.
 */
export class SqliteDebitBatches {
  private readonly statements = new Map<string, Database.Statement>();

  /** `balanceChanged`: an account's balance after a debit, for the ledger's cache of balances. */
  constructor(
    private readonly db: Database.Database,
    private readonly sql: LedgerStatements,
    private readonly credits: SqliteCredits,
    private readonly balanceChanged: (accountId: string, balance: number) => void,
  ) {}

  /**
   * One transaction's batch (the caller's): per account one conditional statement (per run of
   * equal costs), taking MIN(balance / cost, n) of the account's n debits, whichever keys made them,
   * recording in last_debit how many it took (SET expressions read the row as it was), so the
   * balance can never go negative and exactly that many requests are charged. The charges are
   * appended in multi-row inserts.
   */
  debit(jobs: DebitJob[]): DebitResult[] {
    const results = new Array<DebitResult>(jobs.length);
    const charged: Array<{ job: DebitJob; index: number; keyId: string; balance: number }> = [];
    for (const [accountId, debits] of this.debitsByAccount(jobs, results)) {
      const { debited, granted, spent } = this.debitAccount(
        accountId,
        debits.map(({ index }) => (jobs[index] as DebitJob).cost),
      );
      let balance = (debited?.balance ?? 0) + spent;
      for (const { index, keyId } of debits.slice(0, granted)) {
        const job = jobs[index] as DebitJob;
        balance -= job.cost;
        charged.push({ job, index, keyId, balance });
      }
      for (const { index } of debits.slice(granted)) results[index] = refusalFor('active');
      if (debited) {
        const holder = { accountId, keyId: (debits[granted - 1] as { keyId: string }).keyId };
        this.credits.recordCrossings(holder, debited.balance + spent, debited.balance, debited.low_balance_threshold);
        this.balanceChanged(accountId, debited.balance);
      }
    }
    const at = new Date().toISOString();
    for (const chunk of inChunks(charged)) {
      const rows = chunk.flatMap(({ job, keyId }) => [keyId, job.endpoint, at, job.idempotencyRef, job.cost]);
      const insert = this.multiRow(
        'INSERT INTO charges (key_id, endpoint, at, idempotency_ref, credits) VALUES ',
        '(?, ?, ?, ?, ?)',
        '',
        chunk.length,
      );
      const lastId = Number(insert.run(rows).lastInsertRowid);
      // Rows of one INSERT take consecutive rowids in VALUES order (charges are never deleted).
      chunk.forEach((charge, offset) => {
        results[charge.index] = { outcome: 'charged', balance: charge.balance, chargeId: lastId - chunk.length + 1 + offset };
      });
    }
    return results;
  }

  /**
   * A batch's debits by the account they spend from, each account's in arrival order, whatever key
   * made them (keys of one account share its balance). The debits of unknown and inactive keys are
   * refused here, in `results`.
   */
  private debitsByAccount(jobs: DebitJob[], results: DebitResult[]): Map<string, Array<{ index: number; keyId: string }>> {
    const byAccount = new Map<string, Array<{ index: number; keyId: string }>>();
    for (const [keyHash, indexes] of positionsByKey(jobs)) {
      const spender = this.sql.spenderByHash.get(keyHash) as { id: string; account_id: string; status: KeyStatus } | undefined;
      if (spender?.status !== 'active') {
        for (const index of indexes) results[index] = refusalFor(spender?.status);
        continue;
      }
      const debits = byAccount.get(spender.account_id) ?? [];
      for (const index of indexes) debits.push({ index, keyId: spender.id });
      byAccount.set(spender.account_id, debits);
    }
    for (const debits of byAccount.values()) debits.sort((a, b) => a.index - b.index);
    return byAccount;
  }

  /**
   * One account's debits of a batch, in arrival order, each whole: a statement per run of equal
   * costs (usually one), stopping at the first the balance does not cover. The row last debited,
   * how many debits it took and the credits they cost.
   */
  private debitAccount(accountId: string, costs: number[]): { debited: DebitedRow | undefined; granted: number; spent: number } {
    let debited: DebitedRow | undefined;
    let granted = 0;
    let spent = 0;
    for (let start = 0; start < costs.length; ) {
      const cost = costs[start] as number;
      let end = start + 1;
      while (end < costs.length && costs[end] === cost) end++;
      const row = this.sql.debit.get({ accountId, count: end - start, cost }) as DebitedRow | undefined;
      if (!row) break;
      debited = row;
      granted += row.last_debit;
      spent += row.last_debit * cost;
      if (row.last_debit < end - start) break;
      start = end;
    }
    return { debited, granted, spent };
  }

  /** The final statuses of charged requests, written in the caller's transaction. */
  writeOutcomes(outcomes: ChargeOutcome[]): void {
    for (const chunk of inChunks(outcomes)) {
      this.multiRow(
        'UPDATE charges SET outcome_status = outcome.column2 FROM (VALUES ',
        '(?, ?)',
        ') AS outcome WHERE charges.id = outcome.column1 AND charges.outcome_status IS NULL',
        chunk.length,
      ).run(chunk.flat());
    }
  }

  /** A ledger statement repeating `row` count times, prepared once per shape. */
  private multiRow(prefix: string, row: string, suffix: string, count: number): Database.Statement {
    const sql = `${prefix}${Array.from({ length: count }, () => row).join(', ')}${suffix}`;
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

function* inChunks<T>(rows: T[]): Generator<T[]> {
  for (let start = 0; start < rows.length; start += MULTI_ROW_CHUNK) yield rows.slice(start, start + MULTI_ROW_CHUNK);
}
