import type { Command } from 'commander';
import type { LedgerAudit } from '../../billing/ledger.js';
import type { Store } from '../../store/store.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { table } from '../table.js';

export interface AuditReport {
  accountsChecked: number;
  consistent: boolean;
  /** Accounts whose credits granted - charged - expired differ from their balance (judged in exact integers by the store). */
  differences: Array<LedgerAudit & { expectedBalance: number }>;
  /** Idempotent requests charged more than once (by the ref of their claim). */
  chargedTwice: Array<{ ref: string; charges: number }>;
}

/**
 * Checks every account's ledger (credits granted - charged to its keys - expired when grants ran out = balance >= 0)
 * and that no request sent with an Idempotency-Key was charged more than once.
 */
export async function auditLedger(store: Store): Promise<AuditReport> {
  const ledgers = await store.ledger.auditLedger();
  const differences = ledgers
    .filter((ledger) => !ledger.consistent)
    .map((ledger) => ({ ...ledger, expectedBalance: ledger.granted - ledger.charged - ledger.expired }));
  const chargedTwice = await store.ledger.auditIdempotentCharges();
  return { accountsChecked: ledgers.length, consistent: differences.length === 0 && chargedTwice.length === 0, differences, chargedTwice };
}

export function auditCommand(program: Command, cli: CliContext): void {
  program
    .command('audit')
    .description('Check every account: credits granted - charged - expired = balance. Exits 1 on any difference.')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const report = await cli.withStore(auditLedger);
      cli.output(options.json, report, renderAudit);
      if (report.differences.length > 0) throw new CliError(`the ledger of ${report.differences.length} accounts does not add up`, true);
      if (report.chargedTwice.length > 0) throw new CliError(`${report.chargedTwice.length} idempotent requests were charged more than once`, true);
    });
}

export function renderAudit(report: AuditReport): string {
  if (report.consistent) {
    return `Ledger consistent: ${report.accountsChecked} accounts, credits granted - charged - expired = balance for each; no idempotent request charged twice.`;
  }
  const lines: string[] = [];
  if (report.differences.length > 0) {
    lines.push(
      `Ledger INCONSISTENT for ${report.differences.length} of ${report.accountsChecked} accounts:`,
      table([
        ['ACCOUNT', 'GRANTED', 'CHARGED', 'EXPIRED', 'EXPECTED', 'BALANCE'],
        ...report.differences.map((row) => [
          row.accountId,
          String(row.granted),
          String(row.charged),
          String(row.expired),
          String(row.expectedBalance),
          String(row.balance),
        ]),
      ]),
    );
  }
  if (report.chargedTwice.length > 0) {
    lines.push(
      `${report.chargedTwice.length} idempotent requests were charged more than once:`,
      table([['CLAIM REF', 'CHARGES'], ...report.chargedTwice.map((row) => [row.ref, String(row.charges)])]),
    );
  }
  return lines.join('\n');
}
