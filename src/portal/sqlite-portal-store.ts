import type Database from 'better-sqlite3';
import type { NewAuditEntry } from '../admin/admin-store.js';
import { prepareAuditInsert } from '../admin/sqlite-admin-store.js';
import type { EndedSessions, LinkRedemption, PortalSession, PortalStore } from './portal-store.js';

/** The portal's links and sessions in the ledger's SQLite database. */
export class SqlitePortalStore implements PortalStore {
  private readonly sql;
  private readonly insertAudit: (entry: NewAuditEntry) => void;

  constructor(private readonly db: Database.Database) {
    this.insertAudit = prepareAuditInsert(db);
    this.sql = {
      insertLink: db.prepare('INSERT INTO portal_links (token_hash, account_id, origin, expires_at) VALUES (?, ?, ?, ?)'),
      redeem: db.prepare(
        'UPDATE portal_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING account_id, origin',
      ),
      link: db.prepare('SELECT used_at, expires_at FROM portal_links WHERE token_hash = ?'),
      insertSession: db.prepare('INSERT INTO portal_sessions (session_hash, account_id, origin, csrf, expires_at) VALUES (?, ?, ?, ?, ?)'),
      session: db.prepare('SELECT account_id, origin, csrf, expires_at FROM portal_sessions WHERE session_hash = ? AND expires_at > ?'),
      endSession: db.prepare('DELETE FROM portal_sessions WHERE session_hash = ?'),
      endAccountSessions: db.prepare('DELETE FROM portal_sessions WHERE account_id = ?'),
      voidAccountLinks: db.prepare('UPDATE portal_links SET expires_at = ? WHERE account_id = ? AND used_at IS NULL AND expires_at > ?'),
    };
  }

  async createLink(tokenHash: string, link: { accountId: string; origin: string; expiresAt: string }, audit: NewAuditEntry): Promise<void> {
    this.db.transaction(() => {
      this.sql.insertLink.run(tokenHash, link.accountId, link.origin, link.expiresAt);
      this.insertAudit(audit);
    })();
  }

  async redeemLink(tokenHash: string, now: string): Promise<LinkRedemption> {
    return this.db.transaction((): LinkRedemption => {
      const redeemed = this.sql.redeem.get(now, tokenHash, now) as { account_id: string; origin: string } | undefined;
      if (redeemed) return { outcome: 'redeemed', accountId: redeemed.account_id, origin: redeemed.origin };
      const link = this.sql.link.get(tokenHash) as { used_at: string | null } | undefined;
      if (!link) return { outcome: 'unknown' };
      return { outcome: link.used_at === null ? 'expired' : 'used' };
    })();
  }

  async createSession(sessionHash: string, session: PortalSession, audit: NewAuditEntry): Promise<void> {
    this.db.transaction(() => {
      this.sql.insertSession.run(sessionHash, session.accountId, session.origin, session.csrf, session.expiresAt);
      this.insertAudit(audit);
    })();
  }

  async findSession(sessionHash: string, now: string): Promise<PortalSession | undefined> {
    const row = this.sql.session.get(sessionHash, now) as { account_id: string; origin: string; csrf: string; expires_at: string } | undefined;
    return row && { accountId: row.account_id, origin: row.origin, csrf: row.csrf, expiresAt: row.expires_at };
  }

  async endSession(sessionHash: string): Promise<void> {
    this.sql.endSession.run(sessionHash);
  }

  async endAccountSessions(accountId: string, now: string, audit: (ended: EndedSessions) => NewAuditEntry): Promise<EndedSessions> {
    // A voided link ends now: opened later it says "expired", as any link past its time does.
    return this.db.transaction(() => {
      const ended = {
        sessions: this.sql.endAccountSessions.run(accountId).changes,
        links: this.sql.voidAccountLinks.run(now, accountId, now).changes,
      };
      this.insertAudit(audit(ended));
      return ended;
    })();
  }
}
