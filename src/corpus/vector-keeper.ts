import { rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { setImmediate as yieldToRequests } from 'node:timers/promises';
import { vectorOfBytes } from '../documents/vector-bytes.js';
import { type ExactVectors, VectorIndex, type VectorMatch } from '../search/vector-index.js';
import type { CorpusFile } from './corpus-file.js';
import { CorpusFollower } from './corpus-follower.js';
import { buildVectorsOnWorker, type VectorBuildResult } from './vector-build.js';
import { type KeptState, VectorFiles } from './vector-files.js';

/**
 * Vectors read and added per step: requests are served between steps. Before a start answers, in
 * large steps on every core; while serving, in small ones on one thread, since an addition holds
 * the event loop (about a millisecond a vector at a million).
 */
const STEPS = {
  starting: { rows: 20_000, threads: availableParallelism() },
  serving: { rows: 250, threads: 1 },
};
/** Vectors added since the last write to disk past which the index is written again, once quiet. */
const PERSIST_AFTER = 1000;
const PERSIST_QUIET_MS = 5000;

/**
 * The vector index of a corpus file, kept level with it as the text index is: documents above
 * the highest row id seen are added (those stored with a vector of the configured length), logged
 * deletions removed. Written to `dir` when it has changed and then stayed quiet, and on close; a
 * start reads it back and catches up from there, or builds it from the stored vectors.
 */
export class VectorKeeper {
  private index: VectorIndex | undefined;
  private state: KeptState;
  private readonly follower: CorpusFollower;
  private catchingUp: Promise<void> | undefined;
  /** The build on a worker, while it runs. */
  private building: { done: Promise<void>; stop(): Promise<void> } | undefined;
  private closed = false;
  private addedSinceWrite = 0;
  /** Whether the state on disk names a file of this process's index, as it stood then. */
  private written = false;
  private persistTimer: NodeJS.Timeout | undefined;
  private readonly files: VectorFiles;

  /** `buildInPlaceRows`: see IndexUpkeep.vectorBuildInPlaceRows. */
  constructor(
    private readonly file: CorpusFile,
    dir: string,
    readonly dimensions: number,
    private readonly buildInPlaceRows: number,
    private readonly warn?: (message: string, error: unknown) => void,
  ) {
    this.state = { corpus: file.identity, dimensions, highestRowid: 0, removalsSeen: 0 };
    this.files = new VectorFiles(dir, warn);
    this.follower = new CorpusFollower(file, true);
  }

  /**
   * Before a start answers: reads the index back from disk and catches up, or builds it from the
   * stored vectors, here when they are few, else on a worker while the service answers (not
   * `ready` until it is done). Later, catches up.
   */
  async prepare(): Promise<void> {
    if (this.index) return this.catchUp(STEPS.serving);
    if (this.building) return;
    const readBack = this.readBack();
    if (!readBack && this.follower.lastRowid() > this.buildInPlaceRows) {
      this.buildOnWorker();
      return;
    }
    this.index = readBack ?? new VectorIndex(this.dimensions);
    await this.catchUp(STEPS.starting);
  }

  /**
   * Where nothing is served (a CLI ingest, `embed --missing`): the index read back or begun, brought
   * level with every stored vector on every core, and written, so that the next start reads it.
   */
  async writeLevel(): Promise<void> {
    await this.building?.stop();
    this.index ??= this.readBack() ?? new VectorIndex(this.dimensions);
    await this.catchUp(STEPS.starting);
    if (this.addedSinceWrite > 0 || !this.written) this.persist();
  }

  /** False while the index is built on a worker after a start: a semantic search would wait for it. */
  get ready(): boolean {
    return this.building === undefined;
  }

  /**
   * The `k` documents nearest to `vector`, most similar first, only those similar at all (> 0); the
   * best `refined` by exact cosine (see VectorIndex.nearest).
   */
  async nearest(vector: Float32Array, k: number, refined: number): Promise<VectorMatch[]> {
    if (this.index) await this.catchUp(STEPS.serving);
    else {
      await this.prepare();
      await this.building?.done;
      await this.catchUp(STEPS.serving);
    }
    const index = this.index as VectorIndex;
    return index.nearest(vector, k, this.exactVectors, refined).filter((match) => match.similarity > 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.persistTimer);
    await this.building?.stop();
    if (this.index && (this.addedSinceWrite > 0 || !this.written)) this.persist();
  }

  /**
   * Builds the index on a worker from the rows stored now (see buildVectorsOnWorker), on every core
   * but one, which is left to the requests; then adopts the file it saved, and catches up with what
   * came since at the next search. Should that fail, the index is built here, between requests.
   */
  private buildOnWorker(): void {
    const rows = this.follower.lastRowid();
    this.warn?.(
      `the vector index is being built from up to ${rows} stored vectors on a worker: until it is, semantic queries are a 503 and hybrid ones lexical`,
      undefined,
    );
    const out = this.files.partialPath();
    const threads = Math.max(1, STEPS.starting.threads - 1);
    const worker = buildVectorsOnWorker({ path: this.file.path, dimensions: this.dimensions, threads, stepRows: STEPS.starting.rows, out });
    const adopt = (built: VectorBuildResult) => {
      if (this.closed) return;
      const index = VectorIndex.load(out, this.dimensions);
      this.state = this.files.commit(out, { ...this.state, highestRowid: built.highestRowid, removalsSeen: built.removalsSeen });
      this.index = index;
      this.written = true;
    };
    const done = worker.built.then(adopt).catch((error: unknown) => {
      if (this.closed) return;
      this.warn?.('the vector index could not be built on a worker: building it here, between requests', error);
      this.index = new VectorIndex(this.dimensions);
      this.state = { ...this.state, highestRowid: 0, removalsSeen: 0 };
    });
    this.building = {
      done: done.finally(() => {
        rmSync(out, { force: true });
        this.building = undefined;
        this.follower.markBehind();
      }),
      stop: async () => {
        await worker.stop();
        await done.catch(() => undefined);
      },
    };
  }

  private readonly exactVectors: ExactVectors = (rowids) => {
    const rows = this.file.sql.vectorsOfRows.all(JSON.stringify(rowids)) as Array<{ id: number; vector: Uint8Array }>;
    const byRow = new Map(rows.map((row) => [row.id, row.vector]));
    return rowids.map((rowid) => {
      const bytes = byRow.get(rowid);
      return bytes && bytes.byteLength === this.dimensions * 4 ? vectorOfBytes(bytes) : undefined;
    });
  };

  private catchUp(step: { rows: number; threads: number }): Promise<void> {
    this.file.noticeExternalWrites();
    if (!this.follower.behind) return this.catchingUp ?? Promise.resolve();
    this.catchingUp ??= this.applyChanges(step).finally(() => {
      this.catchingUp = undefined;
    });
    return this.catchingUp;
  }

  private async applyChanges(step: { rows: number; threads: number }): Promise<void> {
    this.follower.markLevel();
    const index = this.index as VectorIndex;
    const { sql } = this.file;
    const removals = this.follower.removalsAfter(this.state.removalsSeen);
    if (!removals) {
      // Deletions were pruned from the log before this index saw them: build it again.
      this.index = new VectorIndex(this.dimensions);
      this.state = { ...this.state, highestRowid: 0, removalsSeen: this.follower.lastRemoval() };
      return this.applyChanges(step);
    }
    if (removals.length > 0) {
      index.remove(removals.map((removal) => removal.doc_rowid));
      this.state.removalsSeen = removals[removals.length - 1].seq;
    }
    const through = this.follower.lastRowid();
    while (this.state.highestRowid < through) {
      const rows = sql.vectorsFrom.all(this.state.highestRowid, through, step.rows) as Array<{ id: number; vector: Uint8Array }>;
      this.addedSinceWrite += index.addStored(rows, step.threads);
      this.state.highestRowid = rows.length < step.rows ? through : rows[rows.length - 1].id;
      if (rows.length === step.rows) await yieldToRequests();
    }
    if (this.addedSinceWrite >= PERSIST_AFTER) this.persistWhenQuiet();
  }

  private readBack(): VectorIndex | undefined {
    const read = this.files.read(this.state);
    if (!read) return undefined;
    this.state = read.state;
    this.written = true;
    return read.index;
  }

  private persistWhenQuiet(): void {
    clearTimeout(this.persistTimer);
    this.persistTimer = setTimeout(() => this.persist(), PERSIST_QUIET_MS);
    this.persistTimer.unref();
  }

  /** The index to a file of its own, then the state naming it: a crash between leaves the older state, caught up from on the next start. */
  private persist(): void {
    if (!this.index) return;
    try {
      this.state = this.files.write(this.index, this.state);
      this.written = true;
      this.addedSinceWrite = 0;
    } catch (error) {
      this.warn?.('the vector index could not be written to disk', error);
    }
  }
}
