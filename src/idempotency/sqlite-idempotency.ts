import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { IdempotencyClaim, IdempotencyRequest, IdempotencyStore, StoredResponse } from './idempotency-store.js';

interface EntryRow {
  ref: string;
  fingerprint: string;
  state: 'running' | 'done';
  locked_until: number;
  expires_at: number;
  status: number | null;
  body: string | null;
  content_type: string | null;
  credits_remaining: number | null;
}

type Entry = { keyHash: string; idempotencyKey: string; ref: string };

/** A claim's completion, shared with the ledger, which completes an operator's change in the change's own transaction. */
export function prepareCompletion(db: Database.Database): (entry: Entry, response: StoredResponse) => void {
  const complete = db.prepare(
    `UPDATE idempotency SET state = 'done', status = ?, body = ?, content_type = ?, credits_remaining = ?
     WHERE key_hash = ? AND idempotency_key = ? AND ref = ?`,
  );
  return (entry, response) => {
    complete.run(response.status, response.body, response.contentType, response.creditsRemaining, entry.keyHash, entry.idempotencyKey, entry.ref);
  };
}

/** Idempotency entries in the ledger database; each claim is one immediate transaction. */
export class SqliteIdempotency implements IdempotencyStore {
  private readonly sql;
  private readonly completeClaim: (entry: Entry, response: StoredResponse) => void;

  constructor(private readonly ledger: Database.Database) {
    this.completeClaim = prepareCompletion(ledger);
    this.sql = {
      entry: ledger.prepare('SELECT * FROM idempotency WHERE key_hash = ? AND idempotency_key = ?'),
      start: ledger.prepare(
        `INSERT OR REPLACE INTO idempotency (key_hash, idempotency_key, ref, fingerprint, state, locked_until, expires_at)
         VALUES (?, ?, ?, ?, 'running', ?, ?)`,
      ),
      relock: ledger.prepare('UPDATE idempotency SET locked_until = ? WHERE key_hash = ? AND idempotency_key = ? AND ref = ?'),
      chargeOf: ledger.prepare('SELECT id FROM charges WHERE idempotency_ref = ? ORDER BY id LIMIT 1'),
      release: ledger.prepare(`DELETE FROM idempotency WHERE key_hash = ? AND idempotency_key = ? AND ref = ? AND state = 'running'`),
      purge: ledger.prepare('DELETE FROM idempotency WHERE expires_at <= ?'),
    };
  }

  async claim(request: IdempotencyRequest): Promise<IdempotencyClaim> {
    const run = this.ledger.transaction((): IdempotencyClaim => {
      const now = Date.now();
      const row = this.sql.entry.get(request.keyHash, request.idempotencyKey) as EntryRow | undefined;
      if (!row || row.expires_at <= now) {
        const ref = randomUUID();
        this.sql.start.run(request.keyHash, request.idempotencyKey, ref, request.fingerprint, now + request.lockMs, now + request.ttlMs);
        return { outcome: 'claimed', ref, chargeId: null };
      }
      if (row.fingerprint !== request.fingerprint) return { outcome: 'mismatch' };
      if (row.state === 'done') return { outcome: 'replay', response: storedResponse(row) };
      if (row.locked_until > now) return { outcome: 'in-progress' };
      this.sql.relock.run(now + request.lockMs, request.keyHash, request.idempotencyKey, row.ref);
      const charge = this.sql.chargeOf.get(row.ref) as { id: number } | undefined;
      return { outcome: 'claimed', ref: row.ref, chargeId: charge?.id ?? null };
    });
    return run.immediate();
  }

  async complete(entry: Entry, response: StoredResponse): Promise<void> {
    this.completeClaim(entry, response);
  }

  async release(entry: Entry): Promise<void> {
    this.sql.release.run(entry.keyHash, entry.idempotencyKey, entry.ref);
  }

  async purgeExpired(): Promise<number> {
    return this.sql.purge.run(Date.now()).changes;
  }
}

function storedResponse(row: EntryRow): StoredResponse {
  return { status: row.status!, body: row.body!, contentType: row.content_type!, creditsRemaining: row.credits_remaining };
}
