import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToRequests } from 'node:timers/promises';
import { vectorOfBytes } from '../../embeddings/embedder.js';
import type { CorpusFile } from '../corpus/corpus-file.js';
import { type ExactVectors, VectorIndex, type VectorMatch } from './vector-index.js';

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

/** Where the index on disk is level with its corpus file: read back only when all of it matches. */
interface KeptState {
  corpus: string;
  dimensions: number;
  highestRowid: number;
  removalsSeen: number;
  /** The index file's size and fingerprint (see fingerprintOf), when written. */
  file?: { bytes: number; fingerprint: string };
}

/** Bytes hashed at each end of the index file: its header and its last nodes. */
const FINGERPRINT_BYTES = 65_536;

/**
 * A hash of the index file's length and first and last bytes. usearch's loader trusts the file
 * (a damaged one crashed the process in a test), so one is read back only when this matches what
 * was recorded when it was written; hashing the whole file would cost a start about a second a GB.
 */
function fingerprintOf(path: string): { bytes: number; fingerprint: string } {
  const bytes = statSync(path).size;
  const hash = createHash('sha256').update(String(bytes));
  const handle = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(Math.min(FINGERPRINT_BYTES, bytes));
    readSync(handle, chunk, 0, chunk.length, 0);
    hash.update(chunk);
    readSync(handle, chunk, 0, chunk.length, bytes - chunk.length);
    hash.update(chunk);
  } finally {
    closeSync(handle);
  }
  return { bytes, fingerprint: hash.digest('hex') };
}

/**
 * The vector index of a corpus file, kept level with it as the text index is: documents above
 * the highest row id seen are added (those stored with a vector of the configured length), logged
 * deletions removed. Written to `dir` when it has changed and then stayed quiet, and on close; a
 * start reads it back and catches up from there, or builds it from the stored vectors.
 */
export class VectorKeeper {
  private index: VectorIndex | undefined;
  private state: KeptState;
  private stale = true;
  private catchingUp: Promise<void> | undefined;
  private addedSinceWrite = 0;
  private persistTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: CorpusFile,
    private readonly dir: string,
    readonly dimensions: number,
    private readonly warn?: (message: string, error: unknown) => void,
  ) {
    this.state = { corpus: file.identity, dimensions, highestRowid: 0, removalsSeen: 0 };
    file.onChange(() => {
      this.stale = true;
    });
  }

  /** Reads the index back from disk (or builds it) and catches up: before a start answers. */
  async prepare(): Promise<void> {
    const starting = this.index === undefined;
    this.index ??= this.readBack() ?? new VectorIndex(this.dimensions);
    await this.catchUp(starting ? STEPS.starting : STEPS.serving);
  }

  /**
   * The `k` documents nearest to `vector`, most similar first, only those similar at all (> 0); the
   * best `refined` by exact cosine (see VectorIndex.nearest).
   */
  async nearest(vector: Float32Array, k: number, refined: number): Promise<VectorMatch[]> {
    await this.prepare();
    const index = this.index as VectorIndex;
    return index.nearest(vector, k, this.exactVectors, refined).filter((match) => match.similarity > 0);
  }

  close(): void {
    clearTimeout(this.persistTimer);
    if (this.addedSinceWrite > 0 || !existsSync(this.statePath)) this.persist();
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
    if (!this.stale) return this.catchingUp ?? Promise.resolve();
    this.catchingUp ??= this.applyChanges(step).finally(() => {
      this.catchingUp = undefined;
    });
    return this.catchingUp;
  }

  private async applyChanges(step: { rows: number; threads: number }): Promise<void> {
    this.stale = false;
    const index = this.index as VectorIndex;
    const { sql } = this.file;
    const lastRemoval = sql.lastRemoval.get() as number;
    if (lastRemoval > this.state.removalsSeen) {
      const removals = sql.removalsAfter.all(this.state.removalsSeen) as Array<{ seq: number; doc_rowid: number }>;
      if (removals.length === 0 || removals[0].seq > this.state.removalsSeen + 1) {
        // Deletions were pruned from the log before this index saw them: build it again.
        this.index = new VectorIndex(this.dimensions);
        this.state = { ...this.state, highestRowid: 0, removalsSeen: lastRemoval };
        return this.applyChanges(step);
      }
      index.remove(removals.map((removal) => removal.doc_rowid));
      this.state.removalsSeen = removals[removals.length - 1].seq;
    }
    const through = sql.lastRowid.get() as number;
    while (this.state.highestRowid < through) {
      const rows = sql.vectorsFrom.all(this.state.highestRowid, through, step.rows) as Array<{ id: number; vector: Uint8Array }>;
      this.add(index, rows, step.threads);
      this.state.highestRowid = rows.length < step.rows ? through : rows[rows.length - 1].id;
      if (rows.length === step.rows) await yieldToRequests();
    }
    if (this.addedSinceWrite >= PERSIST_AFTER) this.persistWhenQuiet();
  }

  /** Adds the rows whose vectors have the configured length and are not all zeros (no direction to compare). */
  private add(index: VectorIndex, rows: Array<{ id: number; vector: Uint8Array }>, threads: number): void {
    const rowids: number[] = [];
    const vectors = new Float32Array(rows.length * this.dimensions);
    for (const row of rows) {
      if (row.vector.byteLength !== this.dimensions * 4) continue;
      const vector = vectorOfBytes(row.vector);
      if (!vector.some((value) => value !== 0)) continue;
      vectors.set(vector, rowids.length * this.dimensions);
      rowids.push(row.id);
    }
    index.add(rowids, vectors.subarray(0, rowids.length * this.dimensions), threads);
    this.addedSinceWrite += rowids.length;
  }

  private get statePath(): string {
    return join(this.dir, 'vectors.json');
  }

  private get indexPath(): string {
    return join(this.dir, 'vectors.usearch');
  }

  private readBack(): VectorIndex | undefined {
    try {
      if (!existsSync(this.statePath) || !existsSync(this.indexPath)) return undefined;
      const kept = JSON.parse(readFileSync(this.statePath, 'utf8')) as KeptState;
      if (kept.corpus !== this.file.identity || kept.dimensions !== this.dimensions) return undefined;
      const found = fingerprintOf(this.indexPath);
      if (kept.file?.bytes !== found.bytes || kept.file.fingerprint !== found.fingerprint) {
        this.warn?.('the vector index on disk could not be read (it is not the file last written): building it from the stored vectors', undefined);
        return undefined;
      }
      const index = VectorIndex.load(this.indexPath, this.dimensions);
      this.state = kept;
      return index;
    } catch (error) {
      this.warn?.('the vector index on disk could not be read: building it from the stored vectors', error);
      return undefined;
    }
  }

  private persistWhenQuiet(): void {
    clearTimeout(this.persistTimer);
    this.persistTimer = setTimeout(() => this.persist(), PERSIST_QUIET_MS);
    this.persistTimer.unref();
  }

  /** The index, then the state naming what it holds: a crash between leaves an older state, caught up from on the next start. */
  private persist(): void {
    if (!this.index) return;
    try {
      mkdirSync(this.dir, { recursive: true });
      this.index.save(`${this.indexPath}.tmp`);
      renameSync(`${this.indexPath}.tmp`, this.indexPath);
      this.state.file = fingerprintOf(this.indexPath);
      writeFileSync(`${this.statePath}.tmp`, JSON.stringify(this.state));
      renameSync(`${this.statePath}.tmp`, this.statePath);
      this.addedSinceWrite = 0;
    } catch (error) {
      rmSync(`${this.indexPath}.tmp`, { force: true });
      this.warn?.('the vector index could not be written to disk', error);
    }
  }
}
