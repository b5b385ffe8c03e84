import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChangeFeed, DocumentReplica } from '../documents/document-store.js';
import type { DocumentIndex, IndexOrigin, IndexQuery, LanguageChange, SearchResult } from '../search/document-index.js';
import type { Language } from '../search/engine/languages.js';
import { ReplicaFolder } from './replica-folder.js';
import { INDEX_UPKEEP, type IndexUpkeep, SqliteCorpus } from './sqlite-corpus.js';

interface Replica {
  corpus: SqliteCorpus;
  dir: string;
  seq: number;
  source: string;
  /** Held across restarts, when the replica is kept (see options.dir); else a temporary folder. */
  kept: ReplicaFolder | undefined;
}

const REPLICA_BATCH = 5000;

/**
 * An instance's local copy of a shared corpus: a SqliteCorpus, caught up on first use, then kept
 * following the change feed every `pollMs`. Searches and document reads run on it, so ranking is
 * the embedded store's, exactly. With `dir`, the copy, its index on disk and its place in the
 * feed are kept there across restarts (see ReplicaFolder), and a start catches up from where the
 * last one stopped; otherwise (or when every such folder is held by another process) it lives in
 * a temporary folder, removed on close.
 */
export class SearchReplica implements DocumentIndex, DocumentReplica {
  private replica: Replica | undefined;
  private ready: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly feed: ChangeFeed,
    private readonly options: {
      pollMs: number;
      searchThreads: number;
      dir?: string;
      upkeep?: IndexUpkeep;
      warn?: (message: string, error: unknown) => void;
      /** With it, the replica keeps a vector index of the vectors of this length its feed brings. */
      vectorDimensions?: number;
      /** SEARCH_LANGUAGE (see SqliteCorpus); absent: English. */
      language?: Language;
    },
  ) {}

  async search(request: IndexQuery): Promise<SearchResult> {
    return (await this.corpus()).search(request);
  }

  async prepareSearch(): Promise<IndexOrigin> {
    return (await this.corpus()).prepareSearch();
  }

  semanticReady(): boolean {
    return this.replica?.corpus.semanticReady() ?? true;
  }

  languageChange(): LanguageChange | undefined {
    return this.replica?.corpus.languageChange();
  }

  /** The replica, caught up with the feed at least once. */
  async corpus(): Promise<SqliteCorpus> {
    this.ready ??= this.start().catch((error) => {
      this.ready = undefined;
      throw error;
    });
    await this.ready;
    return (this.replica as { corpus: SqliteCorpus }).corpus;
  }

  /** Catches up now, if the replica exists (after a write through this instance, say). */
  async catchUp(): Promise<void> {
    if (this.replica) await this.sync();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.syncing?.catch(() => undefined);
    if (this.replica) {
      await this.replica.corpus.close();
      if (this.replica.kept) this.replica.kept.release();
      else rmSync(this.replica.dir, { recursive: true, force: true });
    }
  }

  /** Opens the replica (once: a start that failed to catch up tries again on the same one), then follows the feed. */
  private async start(): Promise<void> {
    this.replica ??= await this.open();
    await this.sync();
    this.poll();
  }

  private async open(): Promise<Replica> {
    const source = await this.feed.identity();
    const kept = this.options.dir === undefined ? undefined : ReplicaFolder.claim(this.options.dir);
    const position = kept?.position();
    if (kept && position?.source !== source) kept.clear();
    const dir = kept?.dir ?? mkdtempSync(join(tmpdir(), 'metered-search-replica-'));
    const upkeep = { ...(this.options.upkeep ?? INDEX_UPKEEP), searchThreads: this.options.searchThreads };
    const corpus = new SqliteCorpus(dir, upkeep, this.options.warn, undefined, this.options.vectorDimensions, this.options.language);
    return { corpus, dir, seq: position?.source === source ? position.seq : 0, source, kept };
  }

  private poll(): void {
    this.timer = setTimeout(() => {
      this.sync()
        .catch(() => undefined)
        .finally(() => !this.closed && this.poll());
    }, this.options.pollMs);
    this.timer.unref();
  }

  private sync(): Promise<void> {
    this.syncing ??= this.applyFeed().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async applyFeed(): Promise<void> {
    const replica = this.replica as Replica;
    for (;;) {
      const { changes, lastSeq } = await this.feed.changesSince(replica.seq, REPLICA_BATCH);
      if (changes.length === 0 || this.closed) return;
      replica.corpus.applyChanges(changes);
      replica.seq = lastSeq;
      replica.kept?.record({ source: replica.source, seq: lastSeq });
      if (changes.length < REPLICA_BATCH) return;
    }
  }
}
