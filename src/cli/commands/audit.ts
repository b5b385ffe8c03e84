import type { LedgerAudit } from '../../billing/ledger.js';
import type { Store } from '../../store/store.js';

export interface AuditReport {
  keysChecked: number;
  consistent: boolean;
  /** Keys whose credits granted minus charges recorded differ from their balance (judged in exact integers by the store). */
  differences: Array<LedgerAudit & { expectedBalance: number }>;
  /** Idempotent requests charged more than once (by the ref of their claim). */
  chargedTwice: Array<{ ref: string; charges: number }>;
}

/**
 * Checks every key's ledger (credits granted by creation and top-ups - charges recorded = balance >= 0)
 * and that no request sent with an Idempotency-Key was charged more than once.
 */
export async function auditLedger(store: Store): Promise<AuditReport> {
  const ledgers = await store.ledger.auditLedger();
  const differences = ledgers
    .filter((ledger) => !ledger.consistent)
    .map((ledger) => ({ ...ledger, expectedBalance: ledger.granted - ledger.charged }));
  const chargedTwice = await store.ledger.auditIdempotentCharges();
  return { keysChecked: ledgers.length, consistent: differences.length === 0 && chargedTwice.length === 0, differences, chargedTwice };
}
