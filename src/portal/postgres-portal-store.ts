import type { PostgresDatabase } from '../platform/postgres-database.js';
import type { LinkRedemption, PortalSession, PortalStore } from './portal-store.js';

/** The portal's links and sessions in PostgreSQL, shared by every instance: a link is redeemed once whichever instance is asked. */
export class PostgresPortalStore implements PortalStore {
  constructor(private readonly db: PostgresDatabase) {}

  async createLink(tokenHash: string, accountId: string, expiresAt: string): Promise<void> {
    await this.db.query('INSERT INTO portal_links (token_hash, account_id, expires_at) VALUES ($1, $2, $3)', [tokenHash, accountId, expiresAt]);
  }

  async redeemLink(tokenHash: string, now: string): Promise<LinkRedemption> {
    // One statement: the conditional update decides, and the same snapshot says why it did not.
    const { rows } = await this.db.query<{ account_id: string | null; used_at: Date | null; found: boolean }>(
      `WITH redeemed AS (
         UPDATE portal_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING account_id
       )
       SELECT (SELECT account_id FROM redeemed) AS account_id, l.used_at, l.token_hash IS NOT NULL AS found
       FROM (SELECT) AS one LEFT JOIN portal_links l ON l.token_hash = $1`,
      [tokenHash, now],
    );
    const row = rows[0];
    if (row?.account_id) return { outcome: 'redeemed', accountId: row.account_id };
    if (!row?.found) return { outcome: 'unknown' };
    return { outcome: row.used_at === null ? 'expired' : 'used' };
  }

  async createSession(sessionHash: string, session: PortalSession): Promise<void> {
    await this.db.query('INSERT INTO portal_sessions (session_hash, account_id, csrf, expires_at) VALUES ($1, $2, $3, $4)', [
      sessionHash,
      session.accountId,
      session.csrf,
      session.expiresAt,
    ]);
  }

  async findSession(sessionHash: string, now: string): Promise<PortalSession | undefined> {
    const { rows } = await this.db.query<{ account_id: string; csrf: string; expires_at: Date }>(
      'SELECT account_id, csrf, expires_at FROM portal_sessions WHERE session_hash = $1 AND expires_at > $2',
      [sessionHash, now],
    );
    const row = rows[0];
    return row && { accountId: row.account_id, csrf: row.csrf, expiresAt: row.expires_at.toISOString() };
  }

  async endSession(sessionHash: string): Promise<void> {
    await this.db.query('DELETE FROM portal_sessions WHERE session_hash = $1', [sessionHash]);
  }
}
