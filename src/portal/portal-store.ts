import type { NewAuditEntry } from '../admin/admin-store.js';

/**
 * The customer portal's sign-ins: single-use links the operator's website asks for (redeemed once,
 * before they expire) and the cookie sessions they open. Tokens are stored hashed, as keys are.
 * Two implementations, SQLite and PostgreSQL, beside this interface.
 */
export type LinkRedemption =
  | { outcome: 'redeemed'; accountId: string; origin: string }
  | { outcome: 'used' }
  | { outcome: 'expired' }
  | { outcome: 'unknown' };

export interface EndedSessions {
  sessions: number;
  links: number;
}

export interface PortalSession {
  accountId: string;
  /** Who made the link that opened it ("link of admin token tok_…"), for the audit log. */
  origin: string;
  /** The session's CSRF token: every write made with the session's cookie must carry it. */
  csrf: string;
  expiresAt: string;
}

/**
 * Each change that opens or ends access writes its audit entry in its own transaction: a link, a
 * session or an ending is never there without the entry that says who made it.
 */
export interface PortalStore {
  createLink(tokenHash: string, link: { accountId: string; origin: string; expiresAt: string }, audit: NewAuditEntry): Promise<void>;
  /** Marks the link used and answers its account, once: a second redemption, or one after `expires_at`, is refused. */
  redeemLink(tokenHash: string, now: string): Promise<LinkRedemption>;
  createSession(sessionHash: string, session: PortalSession, audit: NewAuditEntry): Promise<void>;
  /** The session while it lasts; undefined after its end or for an unknown one. */
  findSession(sessionHash: string, now: string): Promise<PortalSession | undefined>;
  endSession(sessionHash: string): Promise<void>;
  /** Ends every session of the account and voids its links not yet opened; how many of each, which the audit entry may name. */
  endAccountSessions(accountId: string, now: string, audit: (ended: EndedSessions) => NewAuditEntry): Promise<EndedSessions>;
}
