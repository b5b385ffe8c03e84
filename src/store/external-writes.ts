import { watch, type FSWatcher } from 'node:fs';
import type Database from 'better-sqlite3';

/** How long after a file event SQLite is asked, covering a writer's WAL-index update (no event of its own). */
const SETTLE_MS = 1000;

/**
 * Tells whether another connection (the CLI, another worker process) has committed to a SQLite
 * database since the last call, so caches of its rows can be dropped. PRAGMA data_version answers
 * exactly that, but costs a few microseconds; inotify (fs.watch on the folder) makes it free in
 * the common case: SQLite is asked only within SETTLE_MS of a write to the database's files. A
 * writer's WAL append raises its event before that writer returns, so the event is queued before
 * any request that follows the commit. Without a working watcher, SQLite is asked every time.
 */
export class ExternalWrites {
  private readonly dataVersion: Database.Statement;
  private seenVersion: number;
  private lastFileEventAt = performance.now();
  private watching = false;
  private readonly watcher: FSWatcher | undefined;

  constructor(db: Database.Database, dir: string, fileName: string) {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.seenVersion = this.dataVersion.get() as number;
    try {
      this.watcher = watch(dir, { persistent: false }, (_event, changedFile) => {
        if (changedFile === null || changedFile.startsWith(fileName)) this.lastFileEventAt = performance.now();
      });
      this.watching = true;
      this.watcher.on('error', () => this.close());
    } catch {
      this.watcher = undefined;
    }
  }

  /** True once for each batch of commits other connections made since the previous call. */
  happened(): boolean {
    if (this.watching && performance.now() - this.lastFileEventAt >= SETTLE_MS) return false;
    const version = this.dataVersion.get() as number;
    if (version === this.seenVersion) return false;
    this.seenVersion = version;
    return true;
  }

  close(): void {
    this.watching = false;
    this.watcher?.close();
  }
}
