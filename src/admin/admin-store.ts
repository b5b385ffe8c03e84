/**
 * What the admin plane keeps: the tokens that may call it, and the audit log of every change an
 * operator made, through the admin API or the command line. Kept in the ledger's database
 * (sqlite-admin-store.ts, postgres-admin-store.ts).
 */

import type { AdminScope } from './admin-scopes.js';

export interface AdminTokenRecord {
  id: string;
  name: string;
  /** No scope that changes anything. */
  readOnly: boolean;
  /** What it may do (admin-scopes.ts). */
  scopes: AdminScope[];
  createdAt: string;
  /** When it was revoked; null while it works. */
  revokedAt: string | null;
}

export interface NewAdminToken {
  id: string;
  tokenHash: string;
  name: string;
  scopes: readonly AdminScope[];
}

export interface AuditEntry {
  id: number;
  at: string;
  /** Who made the change: an admin token's name, or `cli`. */
  actor: string;
  /** What was done, such as `keys.create` or `keys.topup`. */
  action: string;
  /** What it was done to, such as a key id; null when nothing in particular. */
  target: string | null;
  /** The HTTP request that made it; null for the command line. */
  requestId: string | null;
  /** The change's figures, such as the credits granted. */
  detail: Record<string, unknown>;
}

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'>;

/** A page of a list, newest first, and where the next one starts (null after the last). */
export interface Page<Item> {
  items: Item[];
  nextCursor: string | null;
}

export interface AdminStore {
  /** With `audit`, the token and its audit entry commit together. */
  createToken(token: NewAdminToken, audit?: (created: AdminTokenRecord) => NewAuditEntry): Promise<AdminTokenRecord>;
  /** The token with this hash, revoked or not. */
  findTokenByHash(tokenHash: string): Promise<AdminTokenRecord | undefined>;
  listTokens(): Promise<AdminTokenRecord[]>;
  /** Revokes a token for good; undefined when no token has this id. */
  /** With `audit`, written in the revocation's transaction when the token exists. */
  revokeToken(id: string, audit?: NewAuditEntry): Promise<AdminTokenRecord | undefined>;
  appendAudit(entry: NewAuditEntry): Promise<void>;
  /** Entries newest first; `cursor` is a previous page's nextCursor. */
  listAudit(limit: number, cursor: string | null): Promise<Page<AuditEntry>>;
}

/** An entry id as an opaque cursor, and back; undefined for a cursor that is not one. */
export function auditCursor(id: number): string {
  return Buffer.from(`a:${id}`).toString('base64url');
}

export function auditCursorId(cursor: string): number | undefined {
  const match = /^a:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match ? Number(match[1]) : undefined;
}
