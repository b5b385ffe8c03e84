import { randomUUID } from 'node:crypto';
import type { PostgresDatabase, Queryable } from '../platform/postgres-database.js';
import type { IdempotencyClaim, IdempotencyRequest, IdempotencyStore, StoredResponse } from './idempotency-store.js';

type Entry = { keyHash: string; idempotencyKey: string; ref: string };

/** Keeps a claim's answer; the ledger calls it on an operator change's own transaction. */
export async function completeClaim(db: Queryable, entry: Entry, response: StoredResponse): Promise<void> {
  await db.query(
    `UPDATE idempotency SET state = 'done', status = $4, body = $5, content_type = $6, credits_remaining = $7
     WHERE key_hash = $1 AND idempotency_key = $2 AND ref = $3`,
    [entry.keyHash, entry.idempotencyKey, entry.ref, response.status, response.body, response.contentType, response.creditsRemaining],
  );
}

interface EntryRow {
  ref: string;
  fingerprint: string;
  state: 'running' | 'done';
  locked: boolean;
  status: number | null;
  body: string | null;
  content_type: string | null;
  credits_remaining: number | null;
}

/**
 * Idempotency entries shared by every instance. Times are PostgreSQL's now(), so instances with
 * skewed clocks agree on when a claim lapses and an entry expires.
 */
export class PostgresIdempotency implements IdempotencyStore {
  constructor(private readonly db: PostgresDatabase) {}

  claim(request: IdempotencyRequest): Promise<IdempotencyClaim> {
    return this.db.transaction(async (client) => {
      const ref = randomUUID();
      // A new entry, or a fresh one in place of an expired one; otherwise the existing row, locked.
      const started = await client.query(
        `INSERT INTO idempotency (key_hash, idempotency_key, ref, fingerprint, state, locked_until, expires_at)
         VALUES ($1, $2, $3, $4, 'running', now() + $5 * interval '1 millisecond', now() + $6 * interval '1 millisecond')
         ON CONFLICT (key_hash, idempotency_key) DO UPDATE
           SET ref = EXCLUDED.ref, fingerprint = EXCLUDED.fingerprint, state = 'running', locked_until = EXCLUDED.locked_until,
               expires_at = EXCLUDED.expires_at, status = NULL, body = NULL, content_type = NULL, credits_remaining = NULL
           WHERE idempotency.expires_at <= now()
         RETURNING ref`,
        [request.keyHash, request.idempotencyKey, ref, request.fingerprint, request.lockMs, request.ttlMs],
      );
      if (started.rowCount === 1) return { outcome: 'claimed', ref, chargeId: null };
      const { rows } = await client.query<EntryRow>(
        `SELECT ref, fingerprint, state, locked_until > now() AS locked, status, body, content_type, credits_remaining
         FROM idempotency WHERE key_hash = $1 AND idempotency_key = $2 FOR UPDATE`,
        [request.keyHash, request.idempotencyKey],
      );
      const row = rows[0];
      if (row.fingerprint !== request.fingerprint) return { outcome: 'mismatch' };
      if (row.state === 'done') {
        const response: StoredResponse = {
          status: row.status!,
          body: row.body!,
          contentType: row.content_type!,
          creditsRemaining: row.credits_remaining,
        };
        return { outcome: 'replay', response };
      }
      if (row.locked) return { outcome: 'in-progress' };
      await client.query(`UPDATE idempotency SET locked_until = now() + $3 * interval '1 millisecond' WHERE key_hash = $1 AND idempotency_key = $2`, [
        request.keyHash,
        request.idempotencyKey,
        request.lockMs,
      ]);
      const charge = await client.query<{ id: number }>('SELECT id FROM charges WHERE idempotency_ref = $1 ORDER BY id LIMIT 1', [row.ref]);
      return { outcome: 'claimed', ref: row.ref, chargeId: charge.rows[0]?.id ?? null };
    });
  }

  async complete(entry: Entry, response: StoredResponse): Promise<void> {
    await completeClaim(this.db, entry, response);
  }

  async release(entry: Entry): Promise<void> {
    await this.db.query(`DELETE FROM idempotency WHERE key_hash = $1 AND idempotency_key = $2 AND ref = $3 AND state = 'running'`, [
      entry.keyHash,
      entry.idempotencyKey,
      entry.ref,
    ]);
  }

  async purgeExpired(): Promise<number> {
    return (await this.db.query('DELETE FROM idempotency WHERE expires_at <= now()')).rowCount ?? 0;
  }
}
