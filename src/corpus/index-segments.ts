import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SearchIndex } from '../search/engine/search-index.js';
import type { SegmentRecord } from '../search/engine/segments/segment-file.js';

/** Bumped whenever what a segment holds, or how, changes: segments of another format are rebuilt, never read. */
const SEGMENT_FORMAT = 1;

/** Segment files no manifest names are removed once this old: another process may be about to name its own. */
const ORPHAN_AGE_MS = 3600_000;

/** What the segments were built from, and how the index was laid out when they were written. */
export interface IndexState {
  /** The corpus file's identity (see CorpusFile): it changes whenever the stored term vectors do. */
  corpus: string;
  /** 'local', or the number of search threads the index was split over. */
  layout: 'local' | number;
  /** The corpus state the index held: documents up to this row id, deletions up to this sequence number. */
  highestRowid: number;
  removalsSeen: number;
}

export interface Manifest extends IndexState {
  format: number;
  segments: SegmentRecord[];
}

/**
 * A corpus's search index on disk: segment files in a folder beside the corpus file, and the
 * manifest naming them, which is what makes them an index. Segments are written and synced first,
 * then the manifest to a temporary name, synced, and renamed over the last one: a crash at any
 * point leaves the previous manifest, or this one, whole. Segments no manifest names are removed.
 */
export class IndexSegments {
  private readonly manifestPath: string;
  /** The corpus state of the segments on disk, as last read or written. */
  private onDisk: IndexState | undefined;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private lastWritten = 0;
  /** When the index first changed since the last write began. */
  private firstUnwritten: number | undefined;
  private closed = false;
  /** What the write writeSoon has waiting would write. */
  private pending: (() => { index: SearchIndex; state: IndexState } | undefined) | undefined;

  constructor(
    readonly dir: string,
    private readonly timing: { persistRows: number; persistQuietMs: number; persistIntervalMs: number },
    /** Told of a write that failed (a full disk, say): the index then starts from the last one written, or is built. */
    private readonly warn: (message: string, error: unknown) => void = () => undefined,
  ) {
    this.manifestPath = join(dir, 'manifest.json');
  }

  /** Removes the manifest, whose segments could not be read: the next write does not take them for its own. */
  discard(): void {
    this.onDisk = undefined;
    try {
      rmSync(this.manifestPath, { force: true });
    } catch {
      // Not removable (permissions): the index built instead is written over it, or fails to be, and says so.
    }
  }

  /** Notes that the index served was read from this manifest: it need not be written again until it changes. */
  restored(manifest: Manifest): void {
    this.onDisk = manifest;
  }

  /**
   * Writes the index `current` gives once it has been unchanged for persistQuietMs, and at least
   * persistIntervalMs after the last write (every write is the whole index); an index that keeps
   * changing is written persistIntervalMs after its first change since the last write. Only if it
   * holds persistRows documents or more and differs from what is on disk. Called at every change.
   */
  writeSoon(current: () => { index: SearchIndex; state: IndexState } | undefined): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.pending = current;
    const now = Date.now();
    this.firstUnwritten ??= now;
    const { persistQuietMs, persistIntervalMs } = this.timing;
    const due = Math.min(Math.max(now + persistQuietMs, this.lastWritten + persistIntervalMs), this.firstUnwritten + persistIntervalMs);
    this.timer = setTimeout(() => this.writeNow(current), Math.max(0, due - now));
    this.timer.unref();
  }

  /**
   * Writes now what writeSoon has waiting, after any write already running, and resolves once it is
   * on disk (or failed, which is told to `warn`). Run at shutdown: a service stopped before its
   * index was written starts the next time from disk rather than building it again.
   */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    await this.writing;
    if (this.pending && this.firstUnwritten !== undefined && !this.closed) this.writeNow(this.pending);
    await this.writing;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private writeNow(current: () => { index: SearchIndex; state: IndexState } | undefined): void {
    const serving = current();
    if (!serving || this.closed || serving.index.liveDocuments + serving.index.deletedDocuments < this.timing.persistRows) return;
    if (this.writing) {
      void this.writing.then(() => this.writeSoon(current));
      return;
    }
    this.firstUnwritten = undefined;
    // Another process on this data folder (serve --workers) may have written the same already.
    this.onDisk = this.read(serving.state) ?? this.onDisk;
    if (this.onDisk && sameCorpusState(this.onDisk, serving.state)) return;
    this.writing = this.write(serving.index, serving.state)
      .then(
        () => {
          this.onDisk = serving.state;
        },
        // A failed write leaves the last manifest as it was; the next change tries again.
        (error: unknown) => this.warn('could not write the search index to disk: the next change tries again', error),
      )
      .finally(() => {
        this.writing = undefined;
        this.lastWritten = Date.now();
      });
  }

  /** The manifest, if there is one of this format for this corpus and layout; else undefined. */
  read(expected: Pick<IndexState, 'corpus' | 'layout'>): Manifest | undefined {
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(this.manifestPath, 'utf8')) as Manifest;
    } catch {
      return undefined;
    }
    const matches =
      manifest.format === SEGMENT_FORMAT &&
      manifest.corpus === expected.corpus &&
      manifest.layout === expected.layout &&
      Array.isArray(manifest.segments);
    return matches ? manifest : undefined;
  }

  /** Writes `index` as of now, with the corpus state it holds; the manifest names it once every segment is on disk. */
  private async write(index: SearchIndex, state: IndexState): Promise<Manifest> {
    mkdirSync(this.dir, { recursive: true });
    const prefix = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    let segments: SegmentRecord[];
    try {
      segments = await index.persist(this.dir, prefix);
    } catch (error) {
      this.removeFiles((file) => file.startsWith(prefix));
      throw error;
    }
    const manifest: Manifest = { format: SEGMENT_FORMAT, ...state, segments };
    const temporary = `${this.manifestPath}.${prefix}.tmp`;
    writeFileSync(temporary, JSON.stringify(manifest, null, 2));
    syncPath(temporary);
    renameSync(temporary, this.manifestPath);
    syncPath(this.dir);
    const named = new Set(segments.map((segment) => segment.file));
    const old = Date.now() - ORPHAN_AGE_MS;
    this.removeFiles((file, modified) => !named.has(file) && file !== 'manifest.json' && (ownOlder(file, prefix) || modified < old));
    return manifest;
  }

  private removeFiles(which: (file: string, modified: number) => boolean): void {
    for (const file of readdirSync(this.dir)) {
      const path = join(this.dir, file);
      try {
        if (which(file, statSync(path).mtimeMs)) rmSync(path, { force: true });
      } catch {
        // Removed by another process meanwhile.
      }
    }
  }
}

function sameCorpusState(a: IndexState, b: IndexState): boolean {
  return a.corpus === b.corpus && a.layout === b.layout && a.highestRowid === b.highestRowid && a.removalsSeen === b.removalsSeen;
}

/** Whether `file` is a segment of a generation begun before `prefix`'s (names start with the time, base 36, fixed width). */
function ownOlder(file: string, prefix: string): boolean {
  const time = prefix.slice(0, prefix.indexOf('-'));
  return file.endsWith('.seg') && file.slice(0, file.indexOf('-')).length === time.length && file.slice(0, time.length) < time;
}

function syncPath(path: string): void {
  const descriptor = openSync(path, 'r');
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
