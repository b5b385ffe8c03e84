import type { Migration } from '../platform/migrations.js';

/** Faces's part of PostgreSQL's schema: its migrations, each with its place in the one order every store applies (store/postgres-schema.ts). */
export const FACES_POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 3,
    sql: `CREATE TABLE faces (
     id bigserial PRIMARY KEY,
     doc_id text NOT NULL UNIQUE,
     descriptor real[] NOT NULL,
     face_file text NOT NULL,
     attributes jsonb,
     engine text NOT NULL,
     enrolled_at timestamptz NOT NULL DEFAULT now()
   );`,
  },
];
