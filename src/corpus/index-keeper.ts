import { StoreUnavailableError } from '../platform/store-faults.js';
import { startModuleWorker } from '../platform/worker-thread.js';
import type { IndexOrigin } from '../search/document-index.js';
import { LocalIndex } from '../search/engine/local-index.js';
import type { RankedRows, SearchIndex, TermSearch } from '../search/engine/search-index.js';
import { ShardedIndex } from '../search/engine/sharded-index.js';
import { collectThenRelease, releaseAfterNextCollection, releaseFreedMemory } from '../search/engine/threads/release-memory.js';
import { SearchThreads } from '../search/engine/threads/search-threads.js';
import type { CorpusFile } from './corpus-file.js';
import { CorpusFollower, type LoggedRemoval } from './corpus-follower.js';
import { type IndexRow, indexBatches, loadIndexOnWorker, loadShardedOnWorker } from './index-loader.js';
import type { IndexSegments, IndexState, Manifest } from './index-segments.js';

/**
 * Deleted documents' postings, as a share of every document the index holds, past which the index
 * is built again without them, in the background. A deletion (and the old version of every
 * re-ingested document) only marks its postings skipped: a corpus re-ingested nightly would
 * otherwise hold one more copy of itself in memory every night until a restart, and every search
 * would step over the dead postings. A quarter keeps the waste below a third of the live index.
 */
const COMPACT_DELETED_SHARE = 0.25;

/** How the index is kept: see INDEX_UPKEEP. */
export interface IndexUpkeep {
  /**
   * Documents added and deleted since the index last looked, past which it is not caught up but
   * built anew in the background while it serves as it is: catching up holds the event loop for
   * every document.
   */
  catchUpLimit: number;
  /** A background rebuild reads `readRows` documents at a time for up to `stepMs`, then requests get their turn. */
  stepMs: number;
  readRows: number;
  /**
   * Row ids from which prepareSearch loads the index with a worker thread reading and decoding the
   * rows: below, starting the worker costs more than it saves.
   */
  workerLoadRows: number;
  /** Threads a large corpus's index is split over (a ShardedIndex), so that searches use that many cores; 1: none. */
  searchThreads: number;
  /** Row ids in the file from which a new index is split over the search threads. */
  threadedRows: number;
  /**
   * For a split index, a background rebuild's step reads at most this many rows, and is taken only
   * once the threads have added the previous one: a search waits behind one step at most.
   */
  threadStepRows: number;
  /**
   * An index of at least this many documents is written to disk (see IndexSegments) once it has
   * been unchanged for persistQuietMs, at most once per persistIntervalMs: each write is the whole
   * index. A start reads it back instead of building it, and catches up from there.
   */
  persistRows: number;
  persistQuietMs: number;
  persistIntervalMs: number;
  /** Terms' postings a search thread appends (or lists it trims) between messages: see search-thread.ts. */
  threadSliceTerms: number;
  /**
   * Documents handed to the index at a time while it loads or catches up. A split index gives each
   * batch whole to the next thread in turn (see ShardedIndex), so fewer documents than this added
   * at once all go to one thread.
   */
  indexBatchRows: number;
  /**
   * Row ids past which a start with no vector index on disk builds it on a worker while the
   * service answers, rather than before (see VectorKeeper): at a million vectors a build takes
   * 15 minutes on two cores; 20,000 take a few seconds.
   */
  vectorBuildInPlaceRows: number;
}
/**
 * 20,000 documents take 0.5-1 s to catch up with at a million; 250 rows about 6 ms. Below 50,000
 * documents a search takes well under a millisecond in this thread, and messages to threads
 * would cost more than they save. A search thread adds 500 documents to a large index in about
 * 35 ms (most of it one cache miss per term's list, whatever the batch's
 * size); with steps of 10 ms of reading (a few thousand rows), four queued per thread, searches
 * during a rebuild at a million documents waited 225 ms at the median (bench:refresh).
 */
export const INDEX_UPKEEP: IndexUpkeep = {
  catchUpLimit: 20_000,
  stepMs: 10,
  readRows: 250,
  workerLoadRows: 50_000,
  searchThreads: 1,
  threadedRows: 50_000,
  threadStepRows: 500,
  persistRows: 50_000,
  persistQuietMs: 5000,
  persistIntervalMs: 60_000,
  /** A millisecond or two at a million documents. */
  threadSliceTerms: 2000,
  indexBatchRows: 10_000,
  vectorBuildInPlaceRows: 20_000,
};

const NO_TERMS = new Uint8Array(0);

/**
 * The search index of a corpus file, kept level with it: loaded on first use (with a worker thread
 * for a large corpus), caught up with every commit before a search, and built anew in the
 * background when there is too much to catch up with, or too many deleted documents, while the
 * old one serves. A large corpus's index is split over search threads (ShardedIndex).
 */
export class IndexKeeper {
  private index: SearchIndex | undefined;
  private readonly follower: CorpusFollower;
  private removalsSeen = 0;
  /** The threads of any ShardedIndex, started with the first one (see newIndex). */
  private searchThreads: SearchThreads | undefined;
  /** The index being built anew in the background, while one is (see rebuild). */
  private rebuilding: Promise<void> | undefined;
  private closed = false;
  /** Where the serving index came from. */
  private origin: IndexOrigin = 'corpus';

  constructor(
    private readonly file: CorpusFile,
    private readonly upkeep: IndexUpkeep,
    private readonly segments?: IndexSegments,
  ) {
    this.follower = new CorpusFollower(file, false);
  }

  /** Whether the serving index is level with the file, so that its doc_ids and titles are current. */
  get level(): boolean {
    return !this.file.db.inTransaction && this.rebuilding === undefined;
  }

  /**
   * Loads the search index now rather than on the first query; for a large corpus, with a worker
   * thread reading and decoding the rows. Should that fail, the index is loaded here.
   */
  async prepare(): Promise<IndexOrigin> {
    if (!this.index && (await this.restoreFromSegments())) return 'segments';
    if (!this.index && this.follower.lastRowid() >= this.upkeep.workerLoadRows) {
      const loaded = await this.loadOnWorker().catch(() => undefined);
      if (loaded && !this.index && !this.closed) {
        const seen = this.catchUp(loaded.index, loaded.removalsSeen);
        if (seen !== undefined) {
          loaded.index.trim();
          this.serve(loaded.index, seen);
        }
      }
      if (loaded && loaded.index !== this.index) loaded.index.drop();
    }
    if (this.closed) return this.origin;
    const index = this.current();
    // The threads collect what their loads freed after their trims (see search-thread.ts), and
    // release it once swept; this thread does the same here, while nothing is served yet. A small
    // index leaves too little behind to be worth the second's wait.
    await index.settled();
    if (index.liveDocuments >= this.upkeep.workerLoadRows) await collectThenRelease();
    else releaseFreedMemory();
    return this.origin;
  }

  /**
   * A search on the current index. Should a search thread have failed, this search is unavailable
   * (503, to be retried) and the next one builds the index anew on new threads.
   */
  async search(index: SearchIndex, query: TermSearch): Promise<RankedRows> {
    try {
      return await index.search(query);
    } catch (error) {
      if (!index.threaded) throw error;
      if (this.index === index) this.index = undefined;
      throw new StoreUnavailableError({ cause: error });
    }
  }

  /**
   * The index, brought up to date with every commit to the file first; or, while one is rebuilt in
   * the background because that was too much to catch up with, as it was.
   */
  current(): SearchIndex {
    this.file.noticeExternalWrites();
    // Inside this connection's own ingest, reads would see its uncommitted documents: the index
    // catches up once the transaction has ended.
    if (this.index && this.file.db.inTransaction) return this.index;
    if (!this.index) {
      const index = this.newIndex();
      const seen = this.catchUp(index, undefined) as number;
      index.trim();
      this.serve(index, seen);
    } else if (this.follower.behind) {
      this.bringLevel(this.index);
    }
    const index = this.index as SearchIndex;
    if (index.deletedDocuments > COMPACT_DELETED_SHARE * (index.liveDocuments + index.deletedDocuments)) this.rebuildInBackground();
    return index;
  }

  /** The documents the search index holds, live and deleted (postings not dropped yet), and whether a new one is being built. */
  statistics(): { liveDocuments: number; deletedDocuments: number; rebuilding: boolean } {
    const index = this.current();
    return { liveDocuments: index.liveDocuments, deletedDocuments: index.deletedDocuments, rebuilding: this.rebuilding !== undefined };
  }

  /** Writes an index not yet on disk while its threads still hold it (IndexSegments.flush), then stops. */
  async close(): Promise<void> {
    await this.segments?.flush();
    this.closed = true;
    this.segments?.close();
    await this.searchThreads?.close();
  }

  /**
   * Serves the index the segments on disk hold, caught up with the file, if they are of this corpus
   * and layout, pass their checks, and are close enough behind the file to catch up with.
   * Otherwise (or if reading them fails) false: the index is built from the file.
   */
  private async restoreFromSegments(): Promise<boolean> {
    const manifest = this.segments?.read(this.expectedState());
    if (!manifest || !this.segments) return false;
    const behind = this.follower.changesSince(manifest.highestRowid, manifest.removalsSeen);
    if (manifest.highestRowid > this.lastRowidAssigned() || manifest.removalsSeen > this.follower.lastRemoval() || behind > this.upkeep.catchUpLimit)
      return false;
    const restored = await this.readSegments(this.segments.dir, manifest).catch(() => undefined);
    if (!restored) {
      // Torn or damaged: set aside, so that the index built instead is written in its place.
      this.segments.discard();
      return false;
    }
    const seen = this.index || this.closed ? undefined : this.catchUp(restored, manifest.removalsSeen);
    if (seen === undefined) {
      restored.drop();
      return this.index !== undefined;
    }
    this.segments.restored(manifest);
    restored.trim();
    this.serve(restored, seen, 'segments');
    return true;
  }

  /** The index a manifest's segments hold; rejects if any is missing or fails its check. */
  private async readSegments(dir: string, manifest: Manifest): Promise<SearchIndex> {
    return manifest.layout === 'local' ? LocalIndex.restore(dir, manifest.segments) : ShardedIndex.restore(this.newThreads(), dir, manifest.segments);
  }

  /** What segments written now would hold, and of which corpus. */
  private expectedState(): Pick<IndexState, 'corpus' | 'layout'> {
    return { corpus: this.file.identity, layout: this.threadedIndexDue() ? this.upkeep.searchThreads : 'local' };
  }

  /**
   * Catches the serving index up with the file, unless that is more than catchUpLimit changes or
   * the deletion log no longer reaches back to where it last looked: then it serves as it is
   * while a new one is built in the background.
   */
  private bringLevel(index: SearchIndex): void {
    const liveBefore = index.liveDocuments;
    const seen =
      this.follower.changesSince(index.highestRowid, this.removalsSeen) <= this.upkeep.catchUpLimit
        ? this.catchUp(index, this.removalsSeen)
        : undefined;
    if (seen === undefined) {
      this.rebuildInBackground();
      return;
    }
    // Posting lists grow by doubling; after a load that grew the index by a tenth or more, the
    // slack is given back (a bulk ingest followed while running would otherwise keep up to half).
    if (index.liveDocuments >= liveBefore * 1.1) {
      index.trim();
      releaseAfterNextCollection();
    }
    this.serve(index, seen);
  }

  private serve(index: SearchIndex, removalsSeen: number, origin: IndexOrigin = 'corpus'): void {
    if (this.index !== index) this.origin = origin;
    if (this.index && this.index !== index) this.index.drop();
    this.index = index;
    this.removalsSeen = removalsSeen;
    this.follower.markLevel();
    // The index and removalsSeen change together, here: what is written is the state recorded with it.
    this.segments?.writeSoon(() => this.index && { index: this.index, state: this.stateOf(this.index) });
  }

  private stateOf(index: SearchIndex): IndexState {
    const layout = index.threaded ? this.upkeep.searchThreads : 'local';
    return { corpus: this.file.identity, layout, highestRowid: index.highestRowid, removalsSeen: this.removalsSeen };
  }

  private loadOnWorker(): Promise<{ index: SearchIndex; removalsSeen: number }> {
    if (!this.threadedIndexDue()) return loadIndexOnWorker(this.file.path, this.upkeep.indexBatchRows);
    const index = this.newShardedIndex();
    return loadShardedOnWorker(this.file.path, this.upkeep.indexBatchRows, index).catch((error: unknown) => {
      index.drop();
      throw error;
    });
  }

  /**
   * An empty index: split over search threads when they are configured and the file holds
   * threadedRows row ids or more, else in this thread.
   */
  private newIndex(): SearchIndex {
    return this.threadedIndexDue() ? this.newShardedIndex() : new LocalIndex();
  }

  /**
   * An empty index to replace the serving one, with room for as many doc_ids and titles as that one
   * holds: most rebuilds follow a re-ingest of much the same corpus.
   */
  private replacementIndex(): SearchIndex {
    const index = this.newIndex();
    if (this.index) index.expectLabels(this.index.liveDocuments, this.index.labelBytes);
    return index;
  }

  /** An empty ShardedIndex, on new threads if those there were have failed. */
  private newShardedIndex(): ShardedIndex {
    return new ShardedIndex(this.newThreads());
  }

  /** The search threads, started anew if those there were have failed. */
  private newThreads(): SearchThreads {
    if (this.searchThreads?.failed) {
      void this.searchThreads.close();
      this.searchThreads = undefined;
    }
    this.searchThreads ??= new SearchThreads(this.upkeep.searchThreads, this.upkeep.threadSliceTerms, startModuleWorker);
    return this.searchThreads;
  }

  private threadedIndexDue(): boolean {
    return this.upkeep.searchThreads > 1 && this.follower.lastRowid() >= this.upkeep.threadedRows;
  }

  /** The highest row id ever given a document, deleted since or not. */
  private lastRowidAssigned(): number {
    return this.file.sql.lastRowidAssigned.get() as number;
  }

  /**
   * Adds the documents above the index's highest row id and applies the deletions logged after
   * `removalsSeen` (for an index read from the start, undefined: none), all from one read
   * snapshot. Returns the last deletion seen, or undefined when the log no longer reaches back to
   * `removalsSeen`, and the index cannot be brought level.
   */
  private catchUp(index: SearchIndex, removalsSeen: number | undefined): number | undefined {
    const { sql } = this.file;
    return this.file.db.transaction((): number | undefined => {
      this.file.loadNewTerms();
      if (removalsSeen === undefined) {
        const seen = this.follower.lastRemoval();
        this.addDocuments(index, sql.documentsAfter.iterate(index.highestRowid) as Iterable<IndexRow>);
        return seen;
      }
      const removals = this.follower.removalsAfter(removalsSeen);
      if (!removals) return undefined;
      this.addDocuments(index, sql.documentsAfter.iterate(index.highestRowid) as Iterable<IndexRow>);
      return applyRemovals(index, removals, removalsSeen);
    })();
  }

  private addDocuments(index: SearchIndex, rows: Iterable<IndexRow>): void {
    for (const { documents, labels } of indexBatches(rows, this.upkeep.indexBatchRows)) index.add(documents, labels);
  }

  private rebuildInBackground(): void {
    if (this.rebuilding) return;
    // A failed rebuild leaves the serving index as it was; the next search tries again.
    this.rebuilding = this.rebuild()
      .catch(() => undefined)
      .finally(() => {
        this.rebuilding = undefined;
      });
  }

  /**
   * Builds the index anew from the file, without deleted documents, while the current one serves:
   * a few milliseconds of work at a time, each in a read transaction of its own, never inside this
   * connection's own write. A step applies deletions logged since the rebuild began, then reads
   * documents in row id order. A row deleted after it was read is in the log; one deleted before is
   * not read; one written meanwhile has a higher row id than any read. So once a step finds
   * nothing left to read, a last catch-up (as any index catches up) leaves it level with the file,
   * and it takes over.
   */
  private async rebuild(): Promise<void> {
    let index = this.replacementIndex();
    let removalsSeen: number | undefined;
    try {
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        if (this.closed) return;
        if (this.file.db.inTransaction) continue;
        // A step hands its documents to a search thread, and a search waits for every thread: one
        // step at a time, so that a search waits behind one step at most, as on the event loop.
        if (!index.idle) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          continue;
        }
        const step = this.rebuildStep(index, removalsSeen);
        removalsSeen = step.removalsSeen;
        if (step.outcome === 'log passed') {
          index.drop();
          index = this.replacementIndex();
          removalsSeen = undefined;
          continue;
        }
        if (step.outcome === 'more' || this.follower.changesSince(index.highestRowid, step.removalsSeen) > this.upkeep.catchUpLimit) continue;
        this.file.noticeExternalWrites();
        const seen = this.catchUp(index, step.removalsSeen);
        if (seen === undefined) continue;
        index.trim();
        this.serve(index, seen);
        releaseAfterNextCollection();
        return;
      }
    } finally {
      // An index that did not take over (the corpus closed, or a step failed) frees its threads' memory.
      if (this.index !== index) index.drop();
    }
  }

  /**
   * One step of a rebuild, in one read transaction: the deletions logged since the last step, then
   * documents in row id order for up to stepMs (on search threads, at most threadStepRows of them,
   * handed over as one message to one thread).
   */
  private rebuildStep(index: SearchIndex, after: number | undefined): { outcome: 'read' | 'more' | 'log passed'; removalsSeen: number } {
    const { sql } = this.file;
    const { stepMs, readRows } = this.upkeep;
    const stepRows = index.threaded ? this.upkeep.threadStepRows : Number.POSITIVE_INFINITY;
    const started = performance.now();
    return this.file.db.transaction(() => {
      const removalsSeen = after ?? this.follower.lastRemoval();
      const removals = this.follower.removalsAfter(removalsSeen, readRows);
      if (!removals) return { outcome: 'log passed' as const, removalsSeen };
      const seen = applyRemovals(index, removals, removalsSeen);
      const read: IndexRow[] = [];
      let lastRead = index.highestRowid;
      let exhausted = false;
      while (!exhausted && read.length < stepRows && (read.length === 0 || performance.now() - started < stepMs)) {
        const limit = Math.min(readRows, stepRows - read.length);
        const rows = sql.documentsFrom.all(lastRead, limit) as IndexRow[];
        for (const row of rows) read.push(row);
        lastRead = rows.at(-1)?.id ?? lastRead;
        exhausted = rows.length < limit;
      }
      this.addDocuments(index, read);
      return { outcome: exhausted && removals.length < readRows ? ('read' as const) : ('more' as const), removalsSeen: seen };
    })();
  }
}

/** Marks the logged deletions in the index; returns the last one's sequence number. */
function applyRemovals(index: SearchIndex, removals: LoggedRemoval[], removalsSeen: number): number {
  for (const removal of removals) index.remove(removal.doc_rowid, removal.terms ?? NO_TERMS);
  return removals.at(-1)?.seq ?? removalsSeen;
}
