import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Folders tried beside the first (`replica-2`, …): one per process on the machine, as `serve --workers N` runs. */
const MAX_FOLDERS = 16;
const OWNER_FILE = 'owner.pid';
const FEED_FILE = 'feed.json';

/** Where a replica's corpus stands in the change feed it follows, and which database's feed that is. */
export interface FeedPosition {
  source: string;
  seq: number;
}

/**
 * A folder a search replica keeps across restarts, held by one process at a time: its corpus file,
 * that corpus's index on disk, and its position in the feed. Two processes applying one feed to
 * one file would apply every change twice.
 */
export class ReplicaFolder {
  private constructor(readonly dir: string) {}

  /**
   * The first of `base`, `base-2`, … that no live process holds, now held by this one; undefined
   * when all are held.
   */
  static claim(base: string): ReplicaFolder | undefined {
    for (let number = 1; number <= MAX_FOLDERS; number++) {
      const dir = number === 1 ? base : `${base}-${number}`;
      mkdirSync(dir, { recursive: true });
      if (takeOwnership(join(dir, OWNER_FILE))) return new ReplicaFolder(dir);
    }
    return undefined;
  }

  /** The feed position recorded with the corpus; undefined if none is (or it cannot be read). */
  position(): FeedPosition | undefined {
    try {
      const position = JSON.parse(readFileSync(join(this.dir, FEED_FILE), 'utf8')) as FeedPosition;
      return typeof position.source === 'string' && Number.isSafeInteger(position.seq) ? position : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Records the feed position, after the changes up to it are committed to the corpus. A crash
   * between the two leaves the position behind, and those changes are applied again: each one
   * sets a document to what it is, so applying it twice changes nothing.
   */
  record(position: FeedPosition): void {
    const path = join(this.dir, FEED_FILE);
    const temporary = `${path}.tmp`;
    const file = openSync(temporary, 'w');
    try {
      writeSync(file, JSON.stringify(position));
      fsyncSync(file);
    } finally {
      closeSync(file);
    }
    renameSync(temporary, path);
  }

  /** Empties the folder (it follows another database now), keeping it held. */
  clear(): void {
    for (const name of readdirSync(this.dir)) if (name !== OWNER_FILE) rmSync(join(this.dir, name), { recursive: true, force: true });
  }

  release(): void {
    rmSync(join(this.dir, OWNER_FILE), { force: true });
    held.delete(join(this.dir, OWNER_FILE));
  }
}

/** The owner files this process holds: in a container restarted, this process may have the id of the last. */
const held = new Set<string>();

/** Writes this process's id as the owner, unless a live process's is there already. */
function takeOwnership(path: string): boolean {
  if (held.has(path)) return false;
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' });
    held.add(path);
    return true;
  } catch {
    // Held, or left by a process that has ended.
  }
  const owner = Number(readFileSync(path, 'utf8'));
  if (owner !== process.pid && alive(owner)) return false;
  const temporary = `${path}.${process.pid}`;
  writeFileSync(temporary, String(process.pid));
  renameSync(temporary, path);
  // Two processes taking over the same leftover: the last rename wins, and the other sees it.
  if (Number(readFileSync(path, 'utf8')) !== process.pid) return false;
  held.add(path);
  return true;
}

function alive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
