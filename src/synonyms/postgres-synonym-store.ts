import type { NewAuditEntry } from '../admin/admin-store.js';
import { insertAudit } from '../admin/postgres-admin-store.js';
import type { PostgresDatabase } from '../platform/postgres-database.js';
import type { SynonymRule } from '../search/synonyms.js';
import { NO_SYNONYMS } from './sqlite-synonym-store.js';
import type { StoredSynonyms, SynonymStore } from './synonym-store.js';

interface SynonymRow {
  rules: SynonymRule[];
  version: string;
  updated_at: Date;
}

/** The synonym rules in PostgreSQL, shared by every instance: one row, replaced whole. */
export class PostgresSynonymStore implements SynonymStore {
  constructor(private readonly db: PostgresDatabase) {}

  async read(): Promise<StoredSynonyms> {
    const { rows } = await this.db.query<SynonymRow>('SELECT rules, version, updated_at FROM synonym_rules WHERE id = 1');
    return rows[0] ? storedOf(rows[0]) : NO_SYNONYMS;
  }

  async version(): Promise<number> {
    const { rows } = await this.db.query<{ version: string }>('SELECT version FROM synonym_rules WHERE id = 1', [], 'synonym-version');
    return rows[0] ? Number(rows[0].version) : 0;
  }

  async replace(rules: SynonymRule[], audit: NewAuditEntry): Promise<StoredSynonyms> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<SynonymRow>(
        `INSERT INTO synonym_rules (id, rules, version, updated_at) VALUES (1, $1, 1, now())
         ON CONFLICT (id) DO UPDATE SET rules = excluded.rules, version = synonym_rules.version + 1, updated_at = now()
         RETURNING rules, version, updated_at`,
        [JSON.stringify(rules)],
      );
      await insertAudit(client, audit);
      return storedOf(rows[0]);
    });
  }
}

function storedOf(row: SynonymRow): StoredSynonyms {
  return { rules: row.rules, version: Number(row.version), updatedAt: row.updated_at.toISOString() };
}
