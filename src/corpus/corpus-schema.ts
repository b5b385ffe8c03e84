import type Database from 'better-sqlite3';
import { migrateSqlite } from '../platform/sqlite-open.js';

/**
 * The corpus file's versioned schema (corpus.sqlite): the documents, their term vectors and the
 * deletion log the search index is kept level by. The corpus owns it; the ledger's is store/'s.
 */
const tokenizer = `tokenize = 'porter unicode61 remove_diacritics 2'`;

export const corpusMigrations: readonly string[] = [
  `CREATE TABLE documents (
     id INTEGER PRIMARY KEY,
     doc_id TEXT NOT NULL UNIQUE,
     title TEXT NOT NULL,
     text TEXT NOT NULL,
     metadata TEXT NOT NULL
   );
   CREATE VIRTUAL TABLE documents_fts USING fts5(title, text, content = 'documents', content_rowid = 'id', ${tokenizer});
   CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
     INSERT INTO documents_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
   END;
   CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
     INSERT INTO documents_fts(documents_fts, rowid, title, text) VALUES ('delete', old.id, old.title, old.text);
     DELETE FROM doc_fields WHERE doc_rowid = old.id;
   END;
   CREATE TABLE doc_fields (
     id INTEGER PRIMARY KEY,
     doc_rowid INTEGER NOT NULL,
     field TEXT NOT NULL,
     vtype TEXT NOT NULL CHECK (vtype IN ('s', 'n', 'b', 'z')),
     value
   );
   CREATE INDEX doc_fields_by_value ON doc_fields(field, value);
   CREATE INDEX doc_fields_by_doc ON doc_fields(doc_rowid);
   CREATE VIRTUAL TABLE doc_fields_fts USING fts5(value, content = 'doc_fields', content_rowid = 'id', ${tokenizer});
   CREATE TRIGGER doc_fields_ai AFTER INSERT ON doc_fields WHEN new.vtype = 's' BEGIN
     INSERT INTO doc_fields_fts(rowid, value) VALUES (new.id, new.value);
   END;
   CREATE TRIGGER doc_fields_ad AFTER DELETE ON doc_fields WHEN old.vtype = 's' BEGIN
     INSERT INTO doc_fields_fts(doc_fields_fts, rowid, value) VALUES ('delete', old.id, old.value);
   END;`,
  // Search and filters move to the in-memory index (src/store/text-index), built from each
  // document's stored term vector, which holds metadata values as terms too. Row ids become AUTOINCREMENT, so a process that has indexed up to
  // some row id finds every later document above it; deletions are logged, with the deleted
  // document's terms, for the same reason.
  `DROP TRIGGER documents_ai;
   DROP TRIGGER documents_ad;
   DROP TABLE documents_fts;
   DROP TABLE doc_fields_fts;
   DROP TABLE doc_fields;
   CREATE TABLE documents_v2 (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     doc_id TEXT NOT NULL UNIQUE,
     title TEXT NOT NULL,
     text TEXT NOT NULL,
     metadata TEXT NOT NULL,
     title_length INTEGER,
     text_length INTEGER,
     terms BLOB
   );
   INSERT INTO documents_v2 (id, doc_id, title, text, metadata) SELECT id, doc_id, title, text, metadata FROM documents;
   DROP TABLE documents;
   ALTER TABLE documents_v2 RENAME TO documents;
   CREATE INDEX documents_unanalysed ON documents(id) WHERE terms IS NULL;
   CREATE TABLE terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
   CREATE TABLE removed_documents (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     doc_rowid INTEGER NOT NULL,
     terms BLOB,
     removed_at INTEGER NOT NULL
   );
   CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
     INSERT INTO removed_documents (doc_rowid, terms, removed_at) VALUES (old.id, old.terms, unixepoch());
   END;`,
  // The analyser now also indexes compounds ("IL-6") joined: every document is analysed again on
  // the next open, so that documents and queries agree.
  `UPDATE documents SET title_length = NULL, text_length = NULL, terms = NULL;`,
  // A persisted search index names the corpus file it was built from: a file replaced by another
  // (restored, or built anew) numbers its rows afresh, and must not be caught up from it. The
  // identity changes too when the documents are analysed anew (see CorpusFile).
  `CREATE TABLE IF NOT EXISTS corpus_identity (id TEXT NOT NULL);
   INSERT INTO corpus_identity (id) SELECT lower(hex(randomblob(16))) WHERE NOT EXISTS (SELECT 1 FROM corpus_identity);`,
  // Documents' vectors for semantic search, stored once per embedded text and model (the key: see
  // embeddingKey), so that a document re-ingested unchanged, or sharing another's text, costs no call.
  `CREATE TABLE embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
   ALTER TABLE documents ADD COLUMN embedding_key TEXT;`,
  // Term vectors carry their terms' positions, which the index keeps for phrases: every document
  // is analysed again on the next open (an index persisted before then is built anew).
  `UPDATE documents SET title_length = NULL, text_length = NULL, terms = NULL;`,
  // Words are analysed in the document's language, else in the corpus's (SEARCH_LANGUAGE), which
  // this row remembers so that a change of it is noticed (see CorpusFile). Documents that carried
  // a language were analysed in English until now: they are analysed again on the next open.
  `CREATE TABLE corpus_analysis (language TEXT NOT NULL);
   INSERT INTO corpus_analysis (language) VALUES ('en');
   UPDATE documents SET title_length = NULL, text_length = NULL, terms = NULL
   WHERE json_extract(metadata, '$.language') IS NOT NULL AND json_extract(metadata, '$.language') IS NOT 'en';`,
  // Vectors in rows appended in order, found by an index of their keys: WITHOUT ROWID put each
  // 1.5 KB vector at its random key's place in the tree, and inserting 100,000 took 8.8 s (1 s now).
  // Documents' keys in an index of their own, so that a rerank reads them without the documents'
  // rows (texts and term vectors): 0.08 ms for 40 against 0.27.
  `CREATE TABLE embeddings_v2 (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, vector BLOB NOT NULL);
   INSERT INTO embeddings_v2 (key, vector) SELECT key, vector FROM embeddings;
   DROP TABLE embeddings;
   ALTER TABLE embeddings_v2 RENAME TO embeddings;
   CREATE INDEX IF NOT EXISTS documents_embedding_keys ON documents(id, embedding_key);`,
];

export function migrateCorpus(db: Database.Database): void {
  migrateSqlite(db, corpusMigrations);
}
