import type { ChargeRecord, KeyRecord } from '../billing/ledger.js';
import type { AuditReport } from './commands/audit.js';
import type { EnrolledFaceSummary } from './commands/faces.js';
import type { EnrollSummary } from './commands/faces-enroll.js';
import type { IngestSummary } from './commands/ingest.js';
import type { CreatedKey, KeyRefill, KeyUsage, RolledKey } from './commands/keys.js';
import { printableValue } from './printable.js';

/** Text renderings of command results; --json prints the result itself instead. */

function table(cells: string[][]): string {
  const rows = cells.map((row) => row.map(printableValue));
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] as number))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A key's name after its id, escaped; nothing when it has none. */
function named(name: string): string {
  return name ? ` (${printableValue(name)})` : '';
}

function rate(rateLimit: number | null): string {
  return rateLimit === null ? 'the default' : `${rateLimit}/s`;
}

export function renderCreatedKey(created: CreatedKey): string {
  return [
    `Created key ${created.id}${named(created.name)} with ${created.balance} credits, rate limit ${rate(created.rateLimit)}.`,
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
  return `Key ${key.id}${named(key.name)} ${verb}: status ${key.status}, balance ${key.balance}, rate limit ${rate(key.rateLimit)}.`;
}

export function renderKeyList(keys: KeyRecord[]): string {
  if (keys.length === 0) return 'No keys yet. Create one with: metered-search keys create --credits N';
  return table([
    ['ID', 'NAME', 'STATUS', 'BALANCE', 'RATE/S', 'CREATED'],
    ...keys.map((key) => [
      key.id,
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

export function renderEnroll(summary: EnrollSummary): string {
  return `Enrolled ${summary.enrolled} faces from ${summary.manifest} in ${summary.seconds} s (${summary.padded} found only inside a border: tight crops).`;
}

export function renderFaceList(faces: EnrolledFaceSummary[]): string {
  if (faces.length === 0) return 'No faces enrolled yet. Enroll some with: metered-search faces enroll MANIFEST';
  return table([
    ['DOC_ID', 'FACE_FILE', 'ATTRIBUTES'],
    ...faces.map((face) => [face.doc_id, face.face_file, face.attributes ? JSON.stringify(face.attributes) : '-']),
  ]);
}

export function renderIngest(summary: IngestSummary): string {
  if (summary.documents === 0) return `Nothing was ingested: ${summary.file} holds no documents.`;
  return `Ingested ${summary.documents} documents from ${summary.file} in ${summary.seconds} s (${summary.documentsPerSecond} docs/s).`;
}

export function renderMigrations(result: { store: string; applied: number[] }): string {
  if (result.store !== 'postgres') return 'The embedded store migrates itself when opened; nothing to do.';
  return result.applied.length === 0 ? 'The database schema is up to date.' : `Applied migrations: ${result.applied.join(', ')}.`;
}

export function renderAudit(report: AuditReport): string {
  if (report.consistent) {
    return `Ledger consistent: ${report.keysChecked} keys, credits granted - charged - expired = balance for each; no idempotent request charged twice.`;
  }
  const lines: string[] = [];
  if (report.differences.length > 0) {
    lines.push(
      `Ledger INCONSISTENT for ${report.differences.length} of ${report.keysChecked} keys:`,
      table([
        ['KEY', 'GRANTED', 'CHARGED', 'EXPIRED', 'EXPECTED', 'BALANCE'],
        ...report.differences.map((row) => [
          row.keyId,
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
