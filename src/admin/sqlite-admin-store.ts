import type Database from 'better-sqlite3';
import { readOnlyScopes, scopesOf, storedScopes } from './admin-scopes.js';
import {
  type AdminStore,
  type AdminTokenRecord,
  type AuditEntry,
  auditCursor,
  auditCursorId,
  type NewAdminToken,
  type NewAuditEntry,
  type Page,
} from './admin-store.js';

interface TokenRow {
  id: string;
  name: string;
  read_only: number;
  scopes: string;
  created_at: string;
  revoked_at: string | null;
}

interface AuditRow {
  id: number;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  request_id: string | null;
  detail: string;
}

const TOKEN_COLUMNS = 'id, name, read_only, scopes, created_at, revoked_at';

function tokenFromRow(row: TokenRow): AdminTokenRecord {
  return {
    id: row.id,
    name: row.name,
    readOnly: row.read_only === 1,
    scopes: scopesOf(row.scopes),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

function auditFromRow(row: AuditRow): AuditEntry {
  const { id, at, actor, action, target } = row;
  return { id, at, actor, action, target, requestId: row.request_id, detail: JSON.parse(row.detail) as Record<string, unknown> };
}

/** The audit log's insert, shared with the ledger, which writes a change's entry in the change's own transaction. */
export function prepareAuditInsert(db: Database.Database): (entry: NewAuditEntry) => void {
  const insert = db.prepare('INSERT INTO audit_log (at, actor, action, target, request_id, detail) VALUES (?, ?, ?, ?, ?, ?)');
  return (entry) => {
    insert.run(new Date().toISOString(), entry.actor, entry.action, entry.target, entry.requestId, JSON.stringify(entry.detail));
  };
}

/** Admin tokens and the audit log in the ledger's SQLite database. */
export class SqliteAdminStore implements AdminStore {
  private readonly sql;
  private readonly insertAudit: (entry: NewAuditEntry) => void;

  constructor(private readonly db: Database.Database) {
    this.insertAudit = prepareAuditInsert(db);
    this.sql = {
      insertToken: db.prepare('INSERT INTO admin_tokens (id, token_hash, name, read_only, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
      tokenByHash: db.prepare(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE token_hash = ?`),
      tokenById: db.prepare(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE id = ?`),
      tokens: db.prepare(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens ORDER BY created_at, id`),
      revoke: db.prepare('UPDATE admin_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      auditPage: db.prepare('SELECT id, at, actor, action, target, request_id, detail FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?'),
    };
  }

  async createToken(token: NewAdminToken, audit?: (created: AdminTokenRecord) => NewAuditEntry): Promise<AdminTokenRecord> {
    const createdAt = new Date().toISOString();
    const readOnly = readOnlyScopes(token.scopes);
    const record = { id: token.id, name: token.name, readOnly, scopes: scopesOf(storedScopes(token.scopes)), createdAt, revokedAt: null };
    this.db.transaction(() => {
      this.sql.insertToken.run(token.id, token.tokenHash, token.name, readOnly ? 1 : 0, storedScopes(token.scopes), createdAt);
      if (audit) this.insertAudit(audit(record));
    })();
    return record;
  }

  async findTokenByHash(tokenHash: string): Promise<AdminTokenRecord | undefined> {
    const row = this.sql.tokenByHash.get(tokenHash) as TokenRow | undefined;
    return row && tokenFromRow(row);
  }

  async listTokens(): Promise<AdminTokenRecord[]> {
    return (this.sql.tokens.all() as TokenRow[]).map(tokenFromRow);
  }

  async revokeToken(id: string, audit?: NewAuditEntry): Promise<AdminTokenRecord | undefined> {
    return this.db.transaction(() => {
      this.sql.revoke.run(new Date().toISOString(), id);
      const row = this.sql.tokenById.get(id) as TokenRow | undefined;
      if (row && audit) this.insertAudit(audit);
      return row && tokenFromRow(row);
    })();
  }

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    this.insertAudit(entry);
  }

  async listAudit(limit: number, cursor: string | null): Promise<Page<AuditEntry>> {
    const before = cursor === null ? Number.MAX_SAFE_INTEGER : (auditCursorId(cursor) ?? 0);
    const rows = this.sql.auditPage.all(before, limit + 1) as AuditRow[];
    const items = rows.slice(0, limit).map(auditFromRow);
    return { items, nextCursor: rows.length > limit ? auditCursor(items[items.length - 1].id) : null };
  }
}
