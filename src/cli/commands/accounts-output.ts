import type { AccountRecord, AccountUsageRow } from '../../billing/accounts.js';
import type { KeyRecord } from '../../billing/ledger.js';
import type { RefillRule } from '../../billing/refills.js';
import type { SpendCap } from '../../billing/spend-caps.js';
import { named, table } from '../table.js';

/** What the accounts commands answer, and how each is printed without --json. */

export interface AccountDetail {
  account: AccountRecord;
  keys: KeyRecord[];
  refill: RefillRule | null;
  capSpend: Array<{ cap: SpendCap; spent: number; resetsAt: string }>;
  usage: AccountUsageRow[];
}

export interface AccountRefill {
  id: string;
  balance: number;
  refill: RefillRule | null;
}

const capsText = (caps: SpendCap[] | null) =>
  caps?.length ? `, spend caps ${caps.map((cap) => `${cap.credits} a ${cap.interval}`).join(', ')}` : '';

export function renderAccount(account: AccountRecord, verb: string): string {
  const external = account.externalId ? `, external id ${account.externalId}` : '';
  return `Account ${account.id}${named(account.name)} ${verb}: balance ${account.balance}${external}${capsText(account.spendCaps)}.`;
}

export function renderAccountList(accounts: AccountRecord[]): string {
  if (accounts.length === 0) return 'No accounts yet. Create one with: metered-search accounts create --name NAME';
  return table([
    ['ID', 'NAME', 'EXTERNAL ID', 'BALANCE', 'CREATED'],
    ...accounts.map((account) => [account.id, account.name || '-', account.externalId ?? '-', String(account.balance), account.createdAt]),
  ]);
}

export function renderAccountDetail(detail: AccountDetail): string {
  const { account, keys, refill, capSpend, usage } = detail;
  const lines = [renderAccount(account, "holds its keys' balance")];
  if (refill) lines.push(`Refills ${refill.credits} credits every ${refill.interval} (${refill.mode}); next at ${refill.nextRefillAt}.`);
  for (const period of capSpend)
    lines.push(`Cap ${period.cap.credits} a ${period.cap.interval}: ${period.spent} spent, resets at ${period.resetsAt}.`);
  lines.push(
    keys.length === 0
      ? `No keys yet. Add one with: metered-search keys create --account ${account.id}`
      : table([['KEY', 'NAME', 'STATUS', 'EXPIRES'], ...keys.map((key) => [key.id, key.name || '-', key.status, key.expiresAt ?? '-'])]),
  );
  if (usage.length > 0)
    lines.push(
      table([['KEY', 'ENDPOINT', 'CHARGES', 'CREDITS'], ...usage.map((row) => [row.keyId, row.endpoint, String(row.charges), String(row.credits)])]),
    );
  return lines.join('\n');
}

export function renderAccountRefill(result: AccountRefill): string {
  const { refill } = result;
  const plan = refill
    ? `refills ${refill.credits} credits every ${refill.interval} (${refill.mode}); next at ${refill.nextRefillAt}`
    : 'has no refill plan';
  return `Account ${result.id} ${plan}. Balance ${result.balance}.`;
}
