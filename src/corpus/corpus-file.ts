import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { ExternalWrites } from '../platform/external-writes.js';
import { openSqlite } from '../platform/sqlite-open.js';
import type { LanguageChange } from '../search/document-index.js';
import { ENGLISH, LANGUAGE_CODES, type Language } from '../search/engine/languages.js';
import { DocumentAnalyser, TermDictionary } from '../search/engine/term-vector.js';
import { migrateCorpus } from './corpus-schema.js';
import { INDEX_ROW_COLUMNS } from './index-loader.js';

/**
 * How long deletions stay in the log other processes follow. A process that has not looked for
 * longer than this rebuilds its index rather than miss one.
 */
const REMOVAL_LOG_SECONDS = 3600;

/**
 * Pages of a new corpus file: a stored document (text and term vector) is a few kilobytes, so with
 * SQLite's default 4 KiB most rows spill onto overflow pages. Measured on 300,000 synthetic documents:
 * 16% smaller file, half the system time of an ingest (fewer, larger WAL writes), the ingest and its
 * checkpoint 15-25% sooner.
 */
const CORPUS_PAGE_SIZE = 16_384;

/**
 * The last deletion ever logged: the log is pruned (see REMOVAL_LOG_SECONDS), so its highest entry
 * may be gone, but AUTOINCREMENT's counter remains, and a reader that has seen less than it and
 * finds nothing after what it saw knows that it missed deletions.
 */
export const LAST_REMOVAL_SQL = "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'removed_documents'), 0)";

/** The highest row id a document holds. */
export const LAST_ROWID_SQL = 'SELECT coalesce(max(id), 0) FROM documents';

/** Stored vectors of the documents with row ids in (?, ?], in row id order, at most ? of them. */
export const VECTORS_FROM_SQL =
  'SELECT d.id, e.vector FROM documents d JOIN embeddings e ON e.key = d.embedding_key WHERE d.id > ? AND d.id <= ? ORDER BY d.id LIMIT ?';

/** The corpus file's statements, prepared once. */
export type CorpusStatements = Record<
  | 'document'
  | 'deleteDocument'
  | 'insertDocument'
  | 'insertTerm'
  | 'countDocuments'
  | 'termsAfter'
  | 'documentsAfter'
  | 'documentsFrom'
  | 'removalsAfter'
  | 'removalsFrom'
  | 'lastRemoval'
  | 'lastRowid'
  | 'lastRowidAssigned'
  | 'pruneRemovals'
  | 'hit'
  | 'unanalysed'
  | 'setTerms'
  | 'insertEmbedding'
  | 'storedEmbeddingKeys'
  | 'vectorsFrom'
  | 'vectorsOfRows'
  | 'termsOfRows'
  | 'textsOfRows'
  | 'rowsOfDocIds'
  | 'sortValuesAfter'
  | 'documentsPage',
  Database.Statement
>;

function prepareStatements(db: Database.Database): CorpusStatements {
  return {
    document: db.prepare('SELECT doc_id, title, text, metadata FROM documents WHERE doc_id = ?'),
    deleteDocument: db.prepare('DELETE FROM documents WHERE doc_id = ?'),
    insertDocument: db.prepare(
      'INSERT INTO documents (doc_id, title, text, metadata, title_length, text_length, terms, embedding_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    insertTerm: db.prepare('INSERT INTO terms (id, term) VALUES (?, ?)'),
    countDocuments: db.prepare('SELECT count(*) AS n FROM documents'),
    termsAfter: db.prepare('SELECT id, term FROM terms WHERE id > ?'),
    documentsAfter: db.prepare(`SELECT ${INDEX_ROW_COLUMNS} FROM documents WHERE id > ? ORDER BY id`),
    documentsFrom: db.prepare(`SELECT ${INDEX_ROW_COLUMNS} FROM documents WHERE id > ? ORDER BY id LIMIT ?`),
    removalsAfter: db.prepare('SELECT seq, doc_rowid, terms FROM removed_documents WHERE seq > ? ORDER BY seq'),
    removalsFrom: db.prepare('SELECT seq, doc_rowid, terms FROM removed_documents WHERE seq > ? ORDER BY seq LIMIT ?'),
    lastRemoval: db.prepare(LAST_REMOVAL_SQL).pluck(),
    lastRowid: db.prepare(LAST_ROWID_SQL).pluck(),
    lastRowidAssigned: db.prepare("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'documents'), 0)").pluck(),
    pruneRemovals: db.prepare('DELETE FROM removed_documents WHERE removed_at < unixepoch() - ?'),
    hit: db.prepare('SELECT doc_id, title FROM documents WHERE id = ?'),
    unanalysed: db.prepare('SELECT id, title, text, metadata FROM documents WHERE terms IS NULL AND id > ? ORDER BY id LIMIT 1000'),
    setTerms: db.prepare('UPDATE documents SET title_length = ?, text_length = ?, terms = ? WHERE id = ?'),
    insertEmbedding: db.prepare('INSERT OR IGNORE INTO embeddings (key, vector) VALUES (?, ?)'),
    storedEmbeddingKeys: db.prepare('SELECT key FROM embeddings WHERE key IN (SELECT value FROM json_each(?))').pluck(),
    vectorsFrom: db.prepare(VECTORS_FROM_SQL),
    vectorsOfRows: db.prepare(
      'SELECT d.id, e.vector FROM documents d INDEXED BY documents_embedding_keys JOIN embeddings e ON e.key = d.embedding_key WHERE d.id IN (SELECT value FROM json_each(?))',
    ),
    termsOfRows: db.prepare('SELECT id, terms FROM documents WHERE id IN (SELECT value FROM json_each(?))'),
    // Metadata only when the phrase is looked for in a metadata field (the second parameter 1).
    textsOfRows: db.prepare(
      'SELECT id, title, text, CASE WHEN ? THEN metadata END AS metadata FROM documents WHERE id IN (SELECT value FROM json_each(?))',
    ),
    rowsOfDocIds: db.prepare('SELECT id FROM documents WHERE doc_id IN (SELECT value FROM json_each(?))').pluck(),
    // The field by its key, not a JSON path: any name is taken as it is.
    sortValuesAfter: db.prepare(
      'SELECT d.id, j.type, j.value FROM documents d, json_each(d.metadata) j WHERE d.id > @after AND j.key = @field ORDER BY d.id',
    ),
    documentsPage: db.prepare('SELECT doc_id, title, text, metadata, embedding_key FROM documents WHERE doc_id > ? ORDER BY doc_id LIMIT ?'),
  };
}

/**
 * corpus.sqlite: documents with their term vectors (metadata values included), the term
 * dictionary, and a log of deletions. Writes are immediate transactions that bring the dictionary
 * up to date first and write the terms they add; `onChange` listeners hear of every commit, this
 * connection's or (noticed on the next read) another's.
 */
export class CorpusFile {
  readonly db: Database.Database;
  readonly path: string;
  readonly sql: CorpusStatements;
  private terms = new TermDictionary();
  private termAnalyser: DocumentAnalyser;
  private readonly externalWrites: ExternalWrites;
  private readonly listeners: Array<() => void> = [];
  /** Which corpus file this is, whatever its path: see the corpus_identity migration. */
  readonly identity: string;
  /** When the corpus's language differed from the one its documents were analysed in, on this open. */
  readonly languageChange: LanguageChange | undefined;

  /** `language`: SEARCH_LANGUAGE, what documents without a `language` of their own are analysed in. */
  constructor(
    dir: string,
    readonly language: Language = ENGLISH,
  ) {
    this.path = join(dir, 'corpus.sqlite');
    this.db = openSqlite(this.path, { pageSize: CORPUS_PAGE_SIZE });
    migrateCorpus(this.db);
    this.termAnalyser = new DocumentAnalyser(this.terms, language);
    this.externalWrites = new ExternalWrites(this.db, dir, 'corpus.sqlite');
    this.sql = prepareStatements(this.db);
    this.languageChange = this.adoptLanguage();
    this.analyseOlderDocuments();
    this.identity = this.db.prepare('SELECT id FROM corpus_identity').pluck().get() as string;
  }

  get dictionary(): TermDictionary {
    return this.terms;
  }

  get analyser(): DocumentAnalyser {
    return this.termAnalyser;
  }

  /** Called after every commit to the file, by this connection or (once noticed) another. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Tells the listeners if another connection has committed since the last look. */
  noticeExternalWrites(): void {
    if (this.externalWrites.happened()) this.changed();
  }

  /** Reads the terms other connections have added since this one last looked. */
  loadNewTerms(): void {
    this.terms.load(this.sql.termsAfter.all(this.terms.highestId) as Array<{ id: number; term: string }>);
  }

  beginWrite(): void {
    this.changed();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      this.loadNewTerms();
    } catch (error) {
      this.rollbackWrite();
      throw error;
    }
  }

  commitWrite(): void {
    for (const [id, term] of this.terms.added) this.sql.insertTerm.run(id, term);
    this.terms.added.length = 0;
    this.sql.pruneRemovals.run(REMOVAL_LOG_SECONDS);
    this.db.exec('COMMIT');
    this.changed();
  }

  /** Rolls back, forgetting the terms the transaction added. */
  rollbackWrite(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.terms = new TermDictionary();
    this.termAnalyser = new DocumentAnalyser(this.terms, this.language);
    this.changed();
  }

  write(work: () => void): void {
    this.beginWrite();
    try {
      work();
      this.commitWrite();
    } catch (error) {
      this.rollbackWrite();
      throw error;
    }
  }

  close(): void {
    this.externalWrites.close();
    this.db.close();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /**
   * When the corpus's language is not the one its documents were analysed in, the documents
   * without a language of their own (or with one not analysed here) are marked to be analysed
   * again, which analyseOlderDocuments then does, in the same open.
   */
  private adoptLanguage(): LanguageChange | undefined {
    const analysedIn = this.db.prepare('SELECT language FROM corpus_analysis').pluck().get() as string;
    if (analysedIn === this.language.code) return undefined;
    let documents = 0;
    this.write(() => {
      documents = this.db
        .prepare(
          `UPDATE documents SET title_length = NULL, text_length = NULL, terms = NULL
           WHERE coalesce(json_extract(metadata, '$.language') IN (SELECT value FROM json_each(?)), 0) = 0`,
        )
        .run(JSON.stringify(LANGUAGE_CODES)).changes;
      this.db.prepare('UPDATE corpus_analysis SET language = ?').run(this.language.code);
    });
    return { from: analysedIn, to: this.language.code, documents };
  }

  /**
   * Documents written before term vectors existed, or by an older analyser, get theirs once, on
   * the first open; read a thousand at a time so that a large corpus is never all in memory. The
   * file takes a new identity: an index persisted from the old vectors no longer matches it.
   */
  private analyseOlderDocuments(): void {
    if (!this.db.prepare('SELECT 1 FROM documents WHERE terms IS NULL LIMIT 1').get()) return;
    this.write(() => {
      this.db.exec('UPDATE corpus_identity SET id = lower(hex(randomblob(16)))');
      let after = 0;
      for (;;) {
        const rows = this.sql.unanalysed.all(after) as Array<{ id: number; title: string; text: string; metadata: string }>;
        if (rows.length === 0) break;
        for (const row of rows) {
          const analysed = this.termAnalyser.analyse(row.title, row.text, JSON.parse(row.metadata));
          this.sql.setTerms.run(analysed.titleLength, analysed.textLength, analysed.terms, row.id);
        }
        after = rows.at(-1)?.id ?? after;
      }
    });
  }
}
