import type { NewAuditEntry } from '../admin/admin-store.js';
import type { SynonymRule } from '../search/synonyms.js';

/** The operator's synonym rules as stored: the whole set, and its version, raised by every change. */
export interface StoredSynonyms {
  rules: SynonymRule[];
  /** 0 before any rule was ever set. */
  version: number;
  updatedAt: string | null;
}

/**
 * The synonym rules every instance applies at query time, kept in the ledger's database beside
 * the audit log (sqlite-synonym-store.ts, postgres-synonym-store.ts).
 */
export interface SynonymStore {
  read(): Promise<StoredSynonyms>;
  /** The version alone: what an instance polls to see a change. */
  version(): Promise<number>;
  /** Replaces every rule, and writes its audit entry, in one transaction. */
  replace(rules: SynonymRule[], audit: NewAuditEntry): Promise<StoredSynonyms>;
}
