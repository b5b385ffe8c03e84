import { hash, randomBytes } from 'node:crypto';
import { ADMIN_SCOPES, type AdminScope, READ_SCOPES } from './admin-scopes.js';
import type { AdminStore, AdminTokenRecord } from './admin-store.js';

/** A prefix and 64 hex digits: never a valid API key (exactly 64 hex), and recognisable in a leak. */
const TOKEN_PATTERN = /^msadmin_[0-9a-f]{64}$/;

export type TokenCheck =
  | { outcome: 'ok'; token: AdminTokenRecord }
  /** No Authorization header, or not `Bearer <token>` of the token's form. */
  | { outcome: 'malformed' }
  /** Well-formed, but no such token, or it was revoked. */
  | { outcome: 'unknown' };

function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** The tokens that may call the admin API: created and revoked from the command line, stored hashed. */
/** Who makes a change, for its audit entry (written in the change's transaction); absent: unaudited (tests' set-up). */
interface Actor {
  actor: string;
  requestId: string | null;
}

export class AdminTokens {
  constructor(private readonly store: AdminStore) {}

  /**
   * A new token; the plain token is returned only here. `access`: its scopes, or true for every
   * `:read` one (a read-only token), false for all of them.
   */
  async create(name: string, access: boolean | readonly AdminScope[], by?: Actor): Promise<{ token: string; record: AdminTokenRecord }> {
    const token = `msadmin_${randomBytes(32).toString('hex')}`;
    const scopes = access === true ? READ_SCOPES : access === false ? ADMIN_SCOPES : access;
    const audit =
      by &&
      ((created: AdminTokenRecord) => ({
        ...by,
        action: 'tokens.create',
        target: created.id,
        detail: { name: created.name, read_only: created.readOnly, scopes: created.scopes },
      }));
    const record = await this.store.createToken({ id: `tok_${randomBytes(8).toString('hex')}`, tokenHash: hashToken(token), name, scopes }, audit);
    return { token, record };
  }

  list(): Promise<AdminTokenRecord[]> {
    return this.store.listTokens();
  }

  revoke(id: string, by?: Actor): Promise<AdminTokenRecord | undefined> {
    return this.store.revokeToken(id, by && { ...by, action: 'tokens.revoke', target: id, detail: {} });
  }

  /** Checks an Authorization header: `Bearer <token>` of a token that exists and is not revoked. */
  async check(authorization: string | undefined): Promise<TokenCheck> {
    // The scheme is case-insensitive (RFC 9110, section 11.1): "bearer" and "BEARER" are Bearer.
    const token = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
    if (!token || !TOKEN_PATTERN.test(token)) return { outcome: 'malformed' };
    const record = await this.store.findTokenByHash(hashToken(token));
    if (!record || record.revokedAt !== null) return { outcome: 'unknown' };
    return { outcome: 'ok', token: record };
  }
}

/** Records a change to the audit log: what was done, to what, with which figures. */
export type ChangeReport = (action: string, target: string, detail: Record<string, unknown>) => Promise<void>;

/** Reports changes outside the ledger to the audit log, as made by `actor` (a token's name, or `cli`) in `requestId`. */
export function auditReport(store: AdminStore, actor: string, requestId: string | null): ChangeReport {
  return (action, target, detail) => store.appendAudit({ actor, action, target, requestId, detail });
}
