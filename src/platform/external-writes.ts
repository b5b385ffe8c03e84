import { type FSWatcher, watch } from 'node:fs';
import type Database from 'better-sqlite3';

/**
 * How long after the last file event SQLite keeps being asked: a commit becomes visible when the
 * writer updates the WAL index (shared memory, no event of its own), just after its last write.
 */
const SETTLE_MS = 1000;

/**
 * Tells whether another connection (the CLI, another worker process) has committed to a SQLite
 * database since the last call, so caches of its rows can be dropped. PRAGMA data_version answers
 * exactly that but costs about 2 µs, a tenth of /credits; inotify (fs.watch on the folder) makes
 * the common case free. A file event raises a flag that stays raised until SQLite has been asked
 * at least SETTLE_MS after the last event, however long the next call takes to come: a change is
 * never missed because no request arrived in time. Without a working watcher, SQLite is asked
 * every time.
 */
export class ExternalWrites {
  private readonly dataVersion: Database.Statement;
  private seenVersion: number;
  /** Raised from the start: a commit between reading seenVersion and the watcher starting is confirmed too. */
  private lastFileEventAt = performance.now();
  private changePending = true;
  private watching = false;
  private readonly watcher: FSWatcher | undefined;

  constructor(db: Database.Database, dir: string, fileName: string) {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.seenVersion = this.dataVersion.get() as number;
    try {
      this.watcher = watch(dir, { persistent: false }, (_event, changedFile) => {
        if (changedFile !== null && !changedFile.startsWith(fileName)) return;
        this.lastFileEventAt = performance.now();
        this.changePending = true;
      });
      this.watching = true;
      this.watcher.on('error', () => this.close());
    } catch {
      this.watcher = undefined;
    }
  }

  /** True once for each batch of commits other connections made since the previous call. */
  happened(): boolean {
    if (this.watching && !this.changePending) return false;
    const settled = performance.now() - this.lastFileEventAt >= SETTLE_MS;
    const version = this.dataVersion.get() as number;
    if (settled) this.changePending = false;
    if (version === this.seenVersion) return false;
    this.seenVersion = version;
    return true;
  }

  close(): void {
    this.watching = false;
    this.watcher?.close();
  }
}
