import Database from 'better-sqlite3';

/** A SQLite database as every embedded store file is opened. */
export function openSqlite(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // NORMAL in WAL mode: a commit survives a crash of the process (not of the OS), at a fraction of FULL's cost.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}
