import { watch, type FSWatcher } from 'node:fs';

/**
 * Whether the files of a SQLite database may have changed recently, from inotify (fs.watch on
 * their folder), at no cost per call. Another process's commit writes the WAL before that process
 * returns, so its event is queued before any request that follows the commit. The signal stays on
 * for SETTLE_MS after each event, covering the moment between a writer's last WAL write and its
 * update of the shared WAL index, which raises no event of its own. Without a working watcher it
 * is always on, and callers ask SQLite every time.
 */
const SETTLE_MS = 1000;

export class FileChangeSignal {
  private lastChangeAt = performance.now();
  private watching = false;
  private readonly watcher: FSWatcher | undefined;

  constructor(dir: string, fileName: string) {
    try {
      this.watcher = watch(dir, { persistent: false }, (_event, changedFile) => {
        if (changedFile === null || changedFile.startsWith(fileName)) this.lastChangeAt = performance.now();
      });
      this.watching = true;
      this.watcher.on('error', () => {
        this.watching = false;
        this.watcher?.close();
      });
    } catch {
      this.watcher = undefined;
    }
  }

  /** True when the files may have changed within the last SETTLE_MS. */
  recentlyChanged(): boolean {
    return !this.watching || performance.now() - this.lastChangeAt < SETTLE_MS;
  }

  close(): void {
    this.watching = false;
    this.watcher?.close();
  }
}
