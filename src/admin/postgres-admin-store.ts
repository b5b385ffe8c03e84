import type { PostgresDatabase, Queryable } from '../platform/postgres-database.js';
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

/** Appends to the audit log; the ledger calls it on a change's own transaction. */
export async function insertAudit(db: Queryable, entry: NewAuditEntry): Promise<void> {
  await db.query('INSERT INTO audit_log (actor, action, target, request_id, detail) VALUES ($1, $2, $3, $4, $5)', [
    entry.actor,
    entry.action,
    entry.target,
    entry.requestId,
    JSON.stringify(entry.detail),
  ]);
}

interface TokenRow {
  id: string;
  name: string;
  read_only: boolean;
  scopes: string;
  created_at: Date;
  revoked_at: Date | null;
}

interface AuditRow {
  id: number;
  at: Date;
  actor: string;
  action: string;
  target: string | null;
  request_id: string | null;
  detail: Record<string, unknown>;
}

const TOKEN_COLUMNS = 'id, name, read_only, scopes, created_at, revoked_at';

function tokenFromRow(row: TokenRow): AdminTokenRecord {
  return {
    id: row.id,
    name: row.name,
    readOnly: row.read_only,
    scopes: scopesOf(row.scopes),
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

function auditFromRow(row: AuditRow): AuditEntry {
  const { id, actor, action, target, detail } = row;
  return { id, at: row.at.toISOString(), actor, action, target, requestId: row.request_id, detail };
}

/** Admin tokens and the audit log in PostgreSQL, shared by every instance. */
export class PostgresAdminStore implements AdminStore {
  constructor(private readonly db: PostgresDatabase) {}

  async createToken(token: NewAdminToken, audit?: (created: AdminTokenRecord) => NewAuditEntry): Promise<AdminTokenRecord> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<TokenRow>(
        `INSERT INTO admin_tokens (id, token_hash, name, read_only, scopes) VALUES ($1, $2, $3, $4, $5) RETURNING ${TOKEN_COLUMNS}`,
        [token.id, token.tokenHash, token.name, readOnlyScopes(token.scopes), storedScopes(token.scopes)],
      );
      const record = tokenFromRow(rows[0]);
      if (audit) await insertAudit(client, audit(record));
      return record;
    });
  }

  async findTokenByHash(tokenHash: string): Promise<AdminTokenRecord | undefined> {
    const { rows } = await this.db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE token_hash = $1`, [tokenHash], 'admin-token');
    return rows[0] && tokenFromRow(rows[0]);
  }

  async listTokens(): Promise<AdminTokenRecord[]> {
    return (await this.db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens ORDER BY created_at, id`)).rows.map(tokenFromRow);
  }

  async revokeToken(id: string, audit?: NewAuditEntry): Promise<AdminTokenRecord | undefined> {
    return this.db.transaction(async (client) => {
      await client.query('UPDATE admin_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
      const { rows } = await client.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE id = $1`, [id]);
      if (rows[0] && audit) await insertAudit(client, audit);
      return rows[0] && tokenFromRow(rows[0]);
    });
  }

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    await insertAudit(this.db, entry);
  }

  async listAudit(limit: number, cursor: string | null): Promise<Page<AuditEntry>> {
    const before = cursor === null ? Number.MAX_SAFE_INTEGER : (auditCursorId(cursor) ?? 0);
    const { rows } = await this.db.query<AuditRow>(
      'SELECT id, at, actor, action, target, request_id, detail FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2',
      [before, limit + 1],
    );
    const items = rows.slice(0, limit).map(auditFromRow);
    return { items, nextCursor: rows.length > limit ? auditCursor(items[items.length - 1].id) : null };
  }
}
