import type { NewAuditEntry } from '../admin/admin-store.js';
import { type SynonymRule, type SynonymSource, SynonymTable, synonymRulesError } from '../search/synonyms.js';
import type { StoredSynonyms, SynonymStore } from './synonym-store.js';

/** How often an instance asks the store whether the rules changed: another instance's change applies here within it. */
export const SYNONYMS_POLL_MS = 500;

/**
 * The operator's synonym rules as this instance applies them: compiled once per change, and kept
 * current by asking the store for its version every SYNONYMS_POLL_MS (a change made here applies
 * at once). Searches read the compiled table; a store that cannot be reached keeps the last one.
 */
export class SynonymService implements SynonymSource {
  private table = new SynonymTable();
  private version = -1;
  private readonly timer: NodeJS.Timeout;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly store: SynonymStore,
    private readonly log: (message: string, error: unknown) => void = () => {},
    pollMs = SYNONYMS_POLL_MS,
  ) {
    this.timer = setInterval(() => void this.refresh(), pollMs);
    this.timer.unref();
    void this.refresh();
  }

  current(): SynonymTable {
    return this.table;
  }

  list(): Promise<StoredSynonyms> {
    return this.store.read();
  }

  /** Replaces every rule (audited); what is wrong with them instead, naming the rule, when they break a limit. */
  async replace(rules: SynonymRule[], audit: Omit<NewAuditEntry, 'action' | 'detail' | 'target'>): Promise<StoredSynonyms | { error: string }> {
    const error = synonymRulesError(rules);
    if (error) return { error };
    const table = new SynonymTable(rules);
    const stored = await this.store.replace(rules, { ...audit, action: 'synonyms.set', target: null, detail: { rules: rules.length } });
    if (stored.version > this.version) {
      this.table = table;
      this.version = stored.version;
    }
    return stored;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.readChange().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async readChange(): Promise<void> {
    try {
      if ((await this.store.version()) === this.version) return;
      const stored = await this.store.read();
      this.table = new SynonymTable(stored.rules);
      this.version = stored.version;
    } catch (error) {
      this.log('synonym rules unreadable: searches keep the last ones read', error);
    }
  }
}
