import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DocumentChange } from '../documents/document-store.js';
import type { DocumentIndex, SearchRequest, SearchResult } from './document-index.js';
import { INDEX_UPKEEP, SqliteCorpus } from './sqlite-corpus.js';

/** The change feed a replica follows: changes after `seq`, oldest first, at most `limit`. */
export interface ChangeFeed {
  changesSince(seq: number, limit: number): Promise<{ changes: DocumentChange[]; lastSeq: number }>;
}

const REPLICA_BATCH = 5000;

/**
 * An instance's local copy of a shared corpus: a SqliteCorpus in a temporary folder, created and
 * caught up on first use, then kept following the change feed every `pollMs`. Searches and
 * document reads run on it, so ranking is the embedded store's, exactly.
 */
export class SearchReplica implements DocumentIndex {
  private replica: { corpus: SqliteCorpus; dir: string; seq: number } | undefined;
  private ready: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly feed: ChangeFeed,
    private readonly options: { pollMs: number; searchThreads: number },
  ) {}

  async search(request: SearchRequest): Promise<SearchResult> {
    return (await this.corpus()).search(request);
  }

  async prepareSearch(): Promise<void> {
    await (await this.corpus()).prepareSearch();
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
      this.replica.corpus.close();
      rmSync(this.replica.dir, { recursive: true, force: true });
    }
  }

  private async start(): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'metered-search-replica-'));
    this.replica = { corpus: new SqliteCorpus(dir, { ...INDEX_UPKEEP, searchThreads: this.options.searchThreads }), dir, seq: 0 };
    await this.sync();
    this.poll();
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
    const replica = this.replica as { corpus: SqliteCorpus; seq: number };
    for (;;) {
      const { changes, lastSeq } = await this.feed.changesSince(replica.seq, REPLICA_BATCH);
      if (changes.length === 0 || this.closed) return;
      replica.corpus.applyChanges(changes);
      replica.seq = lastSeq;
      if (changes.length < REPLICA_BATCH) return;
    }
  }
}
