import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { ExternalWrites } from './external-writes.js';
import { openSqlite } from './sqlite-open.js';
import { migrateCorpus } from './sqlite-schema.js';
import type { DocumentRecord, FilterScalar, IngestProgress, MetadataValue, SearchRequest, SearchResult } from './store.js';

const STATEMENT_CACHE_LIMIT = 256;
const DOCUMENT_CACHE_CHARS = 32 * 1024 * 1024;

/** A change to apply to a replica: the new version of a document, or its removal. */
export type DocumentChange = { docId: string; document: DocumentRecord | null };

/** A metadata value as rows of (type, value): scalars once, arrays element by element, objects not at all. */
function fieldRows(value: MetadataValue): Array<[string, string | number | null]> {
  if (Array.isArray(value)) return value.flatMap((element) => (Array.isArray(element) ? [] : fieldRows(element)));
  if (value === null) return [['z', null]];
  if (typeof value === 'string') return [['s', value]];
  if (typeof value === 'number') return [['n', value]];
  if (typeof value === 'boolean') return [['b', value ? 1 : 0]];
  return [];
}

function filterCondition(values: FilterScalar[], params: unknown[]): string {
  if (values.length === 0) return '0';
  const alternatives = values.map((value) => {
    if (value === null) return `vtype = 'z'`;
    if (typeof value === 'string') {
      params.push(value);
      return `(vtype = 's' AND value = ?)`;
    }
    if (typeof value === 'number') {
      params.push(value);
      return `(vtype = 'n' AND value = ?)`;
    }
    params.push(value ? 1 : 0);
    return `(vtype = 'b' AND value = ?)`;
  });
  return alternatives.join(' OR ');
}

/** FTS5 query text from analysed terms: each term quoted, so no input can be read as query syntax. */
function matchExpression(terms: string[], column?: string): string {
  const disjunction = terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ');
  return column ? `${column} : (${disjunction})` : disjunction;
}

/**
 * The corpus in one SQLite file: documents, their FTS5 index and their metadata fields. The
 * embedded store's corpus, and each PostgreSQL-backed instance's local search replica.
 */
export class SqliteCorpus {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /**
   * Documents as /document's JSON by id (unknown ids as null), least recently used first out past
   * DOCUMENT_CACHE_CHARS; dropped whenever another connection commits to the file.
   */
  private readonly documentCache = new Map<string, string | null>();
  private documentCacheChars = 0;
  private readonly externalWrites: ExternalWrites;
  private readonly sql;

  constructor(dir: string) {
    this.db = openSqlite(join(dir, 'corpus.sqlite'));
    migrateCorpus(this.db);
    this.externalWrites = new ExternalWrites(this.db, dir, 'corpus.sqlite');
    const c = this.db;
    this.sql = {
      document: c.prepare('SELECT doc_id, title, text, metadata FROM documents WHERE doc_id = ?'),
      deleteDocument: c.prepare('DELETE FROM documents WHERE doc_id = ?'),
      insertDocument: c.prepare('INSERT INTO documents (doc_id, title, text, metadata) VALUES (?, ?, ?, ?)'),
      insertField: c.prepare('INSERT INTO doc_fields (doc_rowid, field, vtype, value) VALUES (?, ?, ?, ?)'),
      countDocuments: c.prepare('SELECT count(*) AS n FROM documents'),
    };
  }

  async getDocumentJson(docId: string): Promise<string | undefined> {
    if (this.externalWrites.happened()) this.dropDocumentCache();
    const cached = this.documentCache.get(docId);
    if (cached !== undefined) {
      this.documentCache.delete(docId);
      this.documentCache.set(docId, cached);
      return cached ?? undefined;
    }
    const row = this.sql.document.get(docId) as { doc_id: string; title: string; text: string; metadata: string } | undefined;
    let json: string | null = null;
    if (row) {
      const core = `{"doc_id":${JSON.stringify(row.doc_id)},"title":${JSON.stringify(row.title)},"text":${JSON.stringify(row.text)}`;
      json = row.metadata === '{}' ? `${core}}` : `${core},${row.metadata.slice(1)}`;
    }
    this.cacheDocument(docId, json);
    return json ?? undefined;
  }

  /** Unknown ids are cached too (as null), so probing for missing documents costs no more reads. */
  private cacheDocument(docId: string, json: string | null): void {
    this.documentCache.set(docId, json);
    this.documentCacheChars += docId.length + (json?.length ?? 0);
    for (const [oldest, value] of this.documentCache) {
      if (this.documentCacheChars <= DOCUMENT_CACHE_CHARS) break;
      this.documentCache.delete(oldest);
      this.documentCacheChars -= oldest.length + (value?.length ?? 0);
    }
  }

  private dropDocumentCache(): void {
    this.documentCache.clear();
    this.documentCacheChars = 0;
  }

  async getDocument(docId: string): Promise<DocumentRecord | undefined> {
    const row = this.sql.document.get(docId) as { doc_id: string; title: string; text: string; metadata: string } | undefined;
    return row && { docId: row.doc_id, title: row.title, text: row.text, metadata: JSON.parse(row.metadata) };
  }

  async ingestDocuments(
    source: AsyncIterable<DocumentRecord>,
    onProgress?: (progress: IngestProgress) => void,
  ): Promise<number> {
    // One transaction across the whole source: a bad record anywhere leaves the corpus untouched.
    this.dropDocumentCache();
    this.db.exec('BEGIN IMMEDIATE');
    let count = 0;
    try {
      for await (const document of source) {
        this.writeDocument(document);
        count++;
        if (onProgress && count % 1000 === 0) onProgress({ documents: count });
      }
      this.db.exec('COMMIT');
      this.dropDocumentCache();
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
    onProgress?.({ documents: count });
    return count;
  }

  private writeDocument(document: DocumentRecord): void {
    this.sql.deleteDocument.run(document.docId);
    const rowid = this.sql.insertDocument.run(
      document.docId,
      document.title,
      document.text,
      JSON.stringify(document.metadata),
    ).lastInsertRowid;
    for (const [field, value] of Object.entries(document.metadata)) {
      for (const [vtype, scalar] of fieldRows(value)) this.sql.insertField.run(rowid, field, vtype, scalar);
    }
  }

  async deleteDocument(docId: string): Promise<boolean> {
    this.dropDocumentCache();
    return this.sql.deleteDocument.run(docId).changes > 0;
  }

  async countDocuments(): Promise<number> {
    return (this.sql.countDocuments.get() as { n: number }).n;
  }

  async search(request: SearchRequest): Promise<SearchResult> {
    const params: unknown[] = [];
    const filters = request.filters.map((filter) => {
      params.push(filter.field);
      return `AND id IN (SELECT doc_rowid FROM doc_fields WHERE field = ? AND (${filterCondition(filter.anyOf, params)}))`;
    });
    let matches: string;
    let counted: string;
    if (request.field.kind === 'metadata') {
      params.unshift(matchExpression(request.terms), request.field.name);
      // MATERIALIZED keeps SQLite from folding bm25() into the aggregate, where it cannot run.
      matches = `WITH field_hits AS MATERIALIZED (
          SELECT doc_fields_fts.rowid AS fid, -bm25(doc_fields_fts) AS s FROM doc_fields_fts WHERE doc_fields_fts MATCH ?
        ) SELECT f.doc_rowid AS id, max(s) AS score FROM field_hits JOIN doc_fields f ON f.id = fid
        WHERE f.field = ? GROUP BY f.doc_rowid`;
      counted = `SELECT count(*) AS n FROM (${matches}) WHERE 1 ${filters.join(' ')}`;
    } else {
      const column = request.field.kind === 'all' ? undefined : request.field.kind;
      params.unshift(matchExpression(request.terms, column));
      // Title matches weigh twice as much as body matches: titles are short and chosen with care.
      matches = `SELECT rowid AS id, -bm25(documents_fts, 2.0, 1.0) AS score FROM documents_fts WHERE documents_fts MATCH ?`;
      // Counting needs no score: FTS5 merges the doclists without ranking anything. Filters apply to
      // the materialised matches: handed to FTS5 as rowid constraints, each one is a lookup of its own.
      counted =
        filters.length === 0
          ? 'SELECT count(*) AS n FROM documents_fts WHERE documents_fts MATCH ?'
          : `WITH m AS MATERIALIZED (SELECT rowid AS id FROM documents_fts WHERE documents_fts MATCH ?)
             SELECT count(*) AS n FROM m WHERE 1 ${filters.join(' ')}`;
    }
    const total = (this.statement(counted).get(...params) as { n: number }).n;
    if (total === 0) return { total, hits: [] };
    // Every match scored once, then filtered: left to itself, SQLite pushed the filters into the
    // full-text scan as rowid lookups, and a filtered query took 40 times as long.
    const hits = this.statement(
      `WITH m AS MATERIALIZED (${matches}), kept AS (SELECT id, score FROM m WHERE 1 ${filters.join(' ')})
       SELECT d.doc_id AS docId, d.title AS title, kept.score AS score FROM kept JOIN documents d ON d.id = kept.id
       ORDER BY kept.score DESC, d.doc_id LIMIT ?`,
    ).all(...params, request.topK) as SearchResult['hits'];
    return { total, hits };
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= STATEMENT_CACHE_LIMIT) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Applies a batch of changes in one transaction (a replica catching up). */
  applyChanges(changes: DocumentChange[]): void {
    this.dropDocumentCache();
    this.db.transaction(() => {
      for (const change of changes) {
        if (change.document) this.writeDocument(change.document);
        else this.sql.deleteDocument.run(change.docId);
      }
    }).immediate();
  }

  close(): void {
    this.externalWrites.close();
    this.db.close();
  }
}
