import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { VectorIndex } from '../search/vector-index.js';

/** Where the index on disk is level with its corpus file: read back only when all of it matches. */
export interface KeptState {
  corpus: string;
  dimensions: number;
  highestRowid: number;
  removalsSeen: number;
  /** The index file this state names (see VectorFiles), with its size and fingerprint (see fingerprintOf). */
  file?: { name?: string; bytes: number; fingerprint: string };
}

const STATE = 'vectors.json';
/** The index file of a state that names none. */
const UNNAMED = 'vectors.usearch';
/** Files being written (`.partial`, `.tmp`) this old are a stopped process's leftovers. */
const LEFTOVER_AGE_MS = 3_600_000;
/** Bytes hashed at each end of the index file: its header and its last nodes. */
const FINGERPRINT_BYTES = 65_536;

/**
 * A vector index's folder: index files, each written once under a name of its own (as `.partial`,
 * renamed once whole), and `vectors.json`, the state naming the one last written. Processes sharing
 * the folder (`serve --workers`) never write the same file, and a state names only a whole file.
 */
export class VectorFiles {
  /** The index file this process last wrote or read. */
  private own: string | undefined;

  constructor(
    readonly dir: string,
    private readonly warn?: (message: string, error: unknown) => void,
  ) {}

  /** The index on disk and the state it is level with, when they are of this corpus and dimensions, and the file is the one named. */
  read(expected: Pick<KeptState, 'corpus' | 'dimensions'>): { index: VectorIndex; state: KeptState } | undefined {
    let kept: KeptState;
    try {
      kept = JSON.parse(readFileSync(join(this.dir, STATE), 'utf8')) as KeptState;
    } catch {
      return undefined;
    }
    if (kept.corpus !== expected.corpus || kept.dimensions !== expected.dimensions || !kept.file) return undefined;
    const name = kept.file.name ?? UNNAMED;
    const path = join(this.dir, name);
    try {
      if (!existsSync(path)) return undefined;
      const found = fingerprintOf(path);
      if (kept.file.bytes !== found.bytes || kept.file.fingerprint !== found.fingerprint) {
        this.warn?.('the vector index on disk could not be read (it is not the file last written): building it from the stored vectors', undefined);
        return undefined;
      }
      const index = VectorIndex.load(path, expected.dimensions);
      this.own = name;
      return { index, state: kept };
    } catch (error) {
      this.warn?.('the vector index on disk could not be read: building it from the stored vectors', error);
      return undefined;
    }
  }

  /** A path no process has written, to save an index to (a build's, or a write's): see `commit`. */
  partialPath(): string {
    mkdirSync(this.dir, { recursive: true });
    return join(this.dir, `vectors-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}.usearch.partial`);
  }

  /** Writes `index` to a file of its own, then the state naming it. */
  write(index: VectorIndex, state: KeptState): KeptState {
    const partial = this.partialPath();
    try {
      index.save(partial);
      return this.commit(partial, state);
    } catch (error) {
      rmSync(partial, { force: true });
      throw error;
    }
  }

  /**
   * Names the index saved whole at `partial` in the state (a crash before leaves the older state,
   * with its file), then removes the other index files: the state names only this one now.
   */
  commit(partial: string, state: KeptState): KeptState {
    const path = partial.slice(0, -'.partial'.length);
    renameSync(partial, path);
    const name = basename(path);
    const named = { ...state, file: { name, ...fingerprintOf(path) } };
    const temporary = join(this.dir, `${STATE}.${randomBytes(4).toString('hex')}.tmp`);
    writeFileSync(temporary, JSON.stringify(named));
    renameSync(temporary, join(this.dir, STATE));
    this.own = name;
    this.removeOthers();
    return named;
  }

  /**
   * Removes the index files other than this process's and files being written that were left
   * long ago. Another process renaming its file just now would lose it: its state would name a
   * missing file, and the next start would build the index again.
   */
  private removeOthers(): void {
    const old = Date.now() - LEFTOVER_AGE_MS;
    for (const name of readdirSync(this.dir)) {
      const path = join(this.dir, name);
      try {
        if (name.endsWith('.usearch') ? name !== this.own : name !== STATE && statSync(path).mtimeMs < old) rmSync(path, { force: true });
      } catch {
        // Removed by another process meanwhile.
      }
    }
  }
}

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
