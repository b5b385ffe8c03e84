import type { Migration } from '../platform/migrations.js';

/** Documents's part of PostgreSQL's schema: its migrations, each with its place in the one order every store applies (store/postgres-schema.ts). */
export const DOCUMENTS_POSTGRES_MIGRATIONS: readonly Migration[] = [
  // Which database this is: a search replica kept on disk (see replica.ts) follows one database's
  // change feed, and starts afresh when pointed at another, or at this one created anew.
  {
    version: 13,
    sql: `CREATE TABLE corpus_identity (id text NOT NULL);
   INSERT INTO corpus_identity (id) VALUES (md5(random()::text || clock_timestamp()::text));`,
  },
  // Documents' vectors for semantic search: see the corpus file's migration of the same table. A
  // vector is written once per key and never changed, so the change feed carries it with its document.
  {
    version: 19,
    sql: `CREATE TABLE document_embeddings (key text PRIMARY KEY, vector bytea NOT NULL);
   ALTER TABLE documents ADD COLUMN embedding_key text;`,
  },
];
