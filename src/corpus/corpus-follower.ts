import type { CorpusFile } from './corpus-file.js';

/** A deletion as the corpus file logs it: the row deleted, and the terms its document held (for the text index). */
export interface LoggedRemoval {
  seq: number;
  doc_rowid: number;
  terms: Uint8Array | null;
}

/**
 * How a copy kept level with a corpus file (the text index, the vector index) learns what to
 * catch up with: whether the file changed since it last looked, and what changed since the point it
 * holds, its highest row id and the last logged deletion it applied. Both keepers follow the file
 * through this one reading of its log.
 */
export class CorpusFollower {
  private changed: boolean;

  /** `changed`: whether the copy starts behind the file (a copy not loaded yet is). */
  constructor(
    private readonly file: CorpusFile,
    changed: boolean,
  ) {
    this.changed = changed;
    file.onChange(() => {
      this.changed = true;
    });
  }

  /** Whether a commit (this process's, or another's noticed by noticeExternalWrites) came since markLevel. */
  get behind(): boolean {
    return this.changed;
  }

  /** Records that the copy has taken in every change committed so far. */
  markLevel(): void {
    this.changed = false;
  }

  /** Records that the copy was replaced by one that has not looked at the file since it was made. */
  markBehind(): void {
    this.changed = true;
  }

  /** Documents written and deleted since the point, at most (two lookups, whatever the number). */
  changesSince(highestRowid: number, removalsSeen: number): number {
    return Math.max(0, this.lastRowid() - highestRowid) + this.lastRemoval() - removalsSeen;
  }

  /**
   * The deletions logged after `removalsSeen`, at most `limit` of them, or undefined when the log
   * no longer reaches back to it (it was pruned past it): the copy cannot be brought level and is
   * built again. Read inside the caller's transaction, so that the answer is of one snapshot.
   */
  removalsAfter(removalsSeen: number, limit?: number): LoggedRemoval[] | undefined {
    const { sql } = this.file;
    const removals = (limit === undefined ? sql.removalsAfter.all(removalsSeen) : sql.removalsFrom.all(removalsSeen, limit)) as LoggedRemoval[];
    const followsOn = removals.length === 0 ? this.lastRemoval() <= removalsSeen : removals[0].seq === removalsSeen + 1;
    return followsOn ? removals : undefined;
  }

  lastRowid(): number {
    return this.file.sql.lastRowid.get() as number;
  }

  lastRemoval(): number {
    return this.file.sql.lastRemoval.get() as number;
  }
}
