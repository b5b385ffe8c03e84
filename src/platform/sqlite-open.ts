import Database from 'better-sqlite3';

/**
 * A SQLite database as every embedded store file is opened. `pageSize` applies to a file created
 * now; an existing file keeps the page size it was created with.
 */
export function openSqlite(path: string, options: { pageSize?: number } = {}): Database.Database {
  const db = new Database(path);
  // Before the journal mode: switching to WAL writes the first page, and with it the page size.
  if (options.pageSize) db.pragma(`page_size = ${options.pageSize}`);
  db.pragma('journal_mode = WAL');
  // NORMAL in WAL mode: a commit survives a crash of the process (not of the OS), at a fraction of FULL's cost.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}

/** Applies the migrations a database lacks, in order, in one immediate transaction; its user_version counts those applied. */
export function migrateSqlite(db: Database.Database, migrations: readonly string[]): void {
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    for (let version = current; version < migrations.length; version++) {
      db.exec(migrations[version] as string);
    }
    if (current < migrations.length) db.pragma(`user_version = ${migrations.length}`);
  }).immediate();
}
