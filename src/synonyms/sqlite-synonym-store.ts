import type Database from 'better-sqlite3';
import type { NewAuditEntry } from '../admin/admin-store.js';
import { prepareAuditInsert } from '../admin/sqlite-admin-store.js';
import type { SynonymRule } from '../search/synonyms.js';
import type { StoredSynonyms, SynonymStore } from './synonym-store.js';

interface SynonymRow {
  rules: string;
  version: number;
  updated_at: string;
}

/** The synonym rules in the ledger's SQLite database: one row, replaced whole. */
export class SqliteSynonymStore implements SynonymStore {
  private readonly sql;
  private readonly insertAudit: (entry: NewAuditEntry) => void;

  constructor(private readonly db: Database.Database) {
    this.insertAudit = prepareAuditInsert(db);
    this.sql = {
      read: db.prepare('SELECT rules, version, updated_at FROM synonym_rules WHERE id = 1'),
      version: db.prepare('SELECT version FROM synonym_rules WHERE id = 1').pluck(),
      replace: db.prepare(
        `INSERT INTO synonym_rules (id, rules, version, updated_at) VALUES (1, @rules, 1, @at)
         ON CONFLICT (id) DO UPDATE SET rules = excluded.rules, version = synonym_rules.version + 1, updated_at = excluded.updated_at`,
      ),
    };
  }

  async read(): Promise<StoredSynonyms> {
    const row = this.sql.read.get() as SynonymRow | undefined;
    return row ? { rules: JSON.parse(row.rules) as SynonymRule[], version: row.version, updatedAt: row.updated_at } : NO_SYNONYMS;
  }

  async version(): Promise<number> {
    return (this.sql.version.get() as number | undefined) ?? 0;
  }

  async replace(rules: SynonymRule[], audit: NewAuditEntry): Promise<StoredSynonyms> {
    this.db.transaction(() => {
      this.sql.replace.run({ rules: JSON.stringify(rules), at: new Date().toISOString() });
      this.insertAudit(audit);
    })();
    return this.read();
  }
}

export const NO_SYNONYMS: StoredSynonyms = { rules: [], version: 0, updatedAt: null };
