import type { NewAuditEntry } from '../admin/admin-store.js';
import { insertAudit } from '../admin/postgres-admin-store.js';
import type { PostgresDatabase } from '../platform/postgres-database.js';
import type { EndedSessions, LinkRedemption, PortalSession, PortalStore } from './portal-store.js';

/** The portal's links and sessions in PostgreSQL, shared by every instance: a link is redeemed once whichever instance is asked. */
export class PostgresPortalStore implements PortalStore {
  constructor(private readonly db: PostgresDatabase) {}

  async createLink(tokenHash: string, link: { accountId: string; origin: string; expiresAt: string }, audit: NewAuditEntry): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query('INSERT INTO portal_links (token_hash, account_id, origin, expires_at) VALUES ($1, $2, $3, $4)', [
        tokenHash,
        link.accountId,
        link.origin,
        link.expiresAt,
      ]);
      await insertAudit(client, audit);
    });
  }

  async redeemLink(tokenHash: string, now: string): Promise<LinkRedemption> {
    // One statement: the conditional update decides, and the statement's snapshot says why it did
    // not. That snapshot predates a redemption that committed while this one waited for the row:
    // a link it shows unused and unexpired was lost to that redemption.
    const { rows } = await this.db.query<{ account_id: string | null; origin: string | null; used_at: Date | null; live: boolean | null }>(
      `WITH redeemed AS (
         UPDATE portal_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING account_id, origin
       )
       SELECT (SELECT account_id FROM redeemed) AS account_id, (SELECT origin FROM redeemed) AS origin, l.used_at, l.expires_at > $2 AS live
       FROM (SELECT) AS one LEFT JOIN portal_links l ON l.token_hash = $1`,
      [tokenHash, now],
    );
    const row = rows[0];
    if (row?.account_id) return { outcome: 'redeemed', accountId: row.account_id, origin: row.origin ?? '' };
    if (row?.live === null || row?.live === undefined) return { outcome: 'unknown' };
    return { outcome: row.used_at === null && !row.live ? 'expired' : 'used' };
  }

  async createSession(sessionHash: string, session: PortalSession, audit: NewAuditEntry): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query('INSERT INTO portal_sessions (session_hash, account_id, origin, csrf, expires_at) VALUES ($1, $2, $3, $4, $5)', [
        sessionHash,
        session.accountId,
        session.origin,
        session.csrf,
        session.expiresAt,
      ]);
      await insertAudit(client, audit);
    });
  }

  async findSession(sessionHash: string, now: string): Promise<PortalSession | undefined> {
    const { rows } = await this.db.query<{ account_id: string; origin: string; csrf: string; expires_at: Date }>(
      'SELECT account_id, origin, csrf, expires_at FROM portal_sessions WHERE session_hash = $1 AND expires_at > $2',
      [sessionHash, now],
    );
    const row = rows[0];
    return row && { accountId: row.account_id, origin: row.origin, csrf: row.csrf, expiresAt: row.expires_at.toISOString() };
  }

  async endSession(sessionHash: string): Promise<void> {
    await this.db.query('DELETE FROM portal_sessions WHERE session_hash = $1', [sessionHash]);
  }

  async endAccountSessions(accountId: string, now: string, audit: (ended: EndedSessions) => NewAuditEntry): Promise<EndedSessions> {
    // One statement, so both end together; a voided link opened later says "expired".
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<{ sessions: number; links: number }>(
        `WITH ended AS (DELETE FROM portal_sessions WHERE account_id = $1 RETURNING 1),
              voided AS (UPDATE portal_links SET expires_at = $2 WHERE account_id = $1 AND used_at IS NULL AND expires_at > $2 RETURNING 1)
         SELECT (SELECT count(*) FROM ended)::integer AS sessions, (SELECT count(*) FROM voided)::integer AS links`,
        [accountId, now],
      );
      const ended = rows[0] ?? { sessions: 0, links: 0 };
      await insertAudit(client, audit(ended));
      return ended;
    });
  }
}
