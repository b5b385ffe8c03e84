import type { ChargeRecord, CreditGrant, KeyRecord } from '../../billing/ledger.js';
import type { RefillRule } from '../../billing/refills.js';
import { named, rate, table } from '../table.js';

/** What the keys commands answer, and how each is printed without --json. */

export interface CreatedKey {
  key: string;
  id: string;
  accountId: string;
  name: string;
  balance: number;
  rateLimit: number | null;
  expiresAt: string | null;
}

export interface KeyRefill {
  id: string;
  name: string;
  balance: number;
  refill: RefillRule | null;
}

export interface RolledKey {
  key: string;
  id: string;
  name: string;
  /** When the former key stops working; null: it already has. */
  oldKeyValidUntil: string | null;
}

export interface KeyUsage {
  key: KeyRecord;
  granted: number;
  charged: number;
  grants: CreditGrant[];
  recentCharges: ChargeRecord[];
}

export function renderCreatedKey(created: CreatedKey): string {
  return [
    `Created key ${created.id}${named(created.name)} of account ${created.accountId}, balance ${created.balance} credits, rate limit ${rate(created.rateLimit)}` +
      `${created.expiresAt ? `, working until ${created.expiresAt}` : ''}.`,
    `API key (shown once, store it now): ${created.key}`,
  ].join('\n');
}

export function renderRefill(result: KeyRefill): string {
  const { refill } = result;
  const plan = refill
    ? `refills ${refill.credits} credits every ${refill.interval} (${refill.mode}); next at ${refill.nextRefillAt}`
    : 'has no refill plan';
  return `Key ${result.id}${named(result.name)} ${plan}. Balance ${result.balance}.`;
}

export function renderRolledKey(rolled: RolledKey): string {
  const until = rolled.oldKeyValidUntil ? `keeps working until ${rolled.oldKeyValidUntil}` : 'no longer works';
  return [`Rolled key ${rolled.id}${named(rolled.name)}: the old key ${until}.`, `New API key (shown once, store it now): ${rolled.key}`].join('\n');
}

export function renderKey(key: KeyRecord, verb: string): string {
  const caps = key.spendCaps?.length ? `, spend caps ${key.spendCaps.map((cap) => `${cap.credits} a ${cap.interval}`).join(', ')}` : '';
  return `Key ${key.id}${named(key.name)} ${verb}: status ${key.status}, balance ${key.balance}, rate limit ${rate(key.rateLimit)}${caps}.`;
}

export function renderKeyList(keys: KeyRecord[]): string {
  if (keys.length === 0) return 'No keys yet. Create one with: metered-search keys create --credits N';
  return table([
    ['ID', 'ACCOUNT', 'NAME', 'STATUS', 'BALANCE', 'RATE/S', 'CREATED'],
    ...keys.map((key) => [
      key.id,
      key.accountId,
      key.name || '-',
      key.status,
      String(key.balance),
      key.rateLimit === null ? 'default' : String(key.rateLimit),
      key.createdAt,
    ]),
  ]);
}

function renderCharges(charges: ChargeRecord[]): string {
  if (charges.length === 0) return 'No charges yet.';
  return table([
    ['TIME', 'ENDPOINT', 'OUTCOME'],
    ...charges.map((charge) => [charge.at, charge.endpoint, charge.outcomeStatus === null ? 'unknown' : String(charge.outcomeStatus)]),
  ]);
}

export function renderUsage(usage: KeyUsage): string {
  return [
    renderKey(usage.key, 'usage'),
    `Credits granted: ${usage.granted}; charges recorded: ${usage.charged}; balance: ${usage.key.balance}.`,
    `Most recent charges:`,
    renderCharges(usage.recentCharges),
  ].join('\n');
}
