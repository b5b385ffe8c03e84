import type { Migration } from '../platform/migrations.js';

/** Faces's part of ledger.sqlite's schema: its migrations, each with its place in the one order every store applies (store/sqlite-schema.ts). */
export const FACES_SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 3,
    sql: `CREATE TABLE faces (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     doc_id TEXT NOT NULL UNIQUE,
     descriptor BLOB NOT NULL,
     face_file TEXT NOT NULL,
     attributes TEXT,
     engine TEXT NOT NULL,
     enrolled_at TEXT NOT NULL
   );`,
  },
];
