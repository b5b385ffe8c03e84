import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ExternalWrites } from './external-writes.js';
import { GroupCommit } from './group-commit.js';
import { migrateCorpus, migrateLedger } from './sqlite-schema.js';
import type {
  ChargeRecord,
  CreditGrant,
  DebitResult,
  DocumentRecord,
  FilterScalar,
  IngestProgress,
  KeyRecord,
  KeyStatus,
  MetadataValue,
  SearchRequest,
  SearchResult,
  Store,
} from './store.js';

interface KeyRow {
  id: string;
  name: string;
  status: KeyStatus;
  balance: number;
  created_at: string;
}

interface DebitJob {
  keyHash: string;
  endpoint: string;
}

const KEY_COLUMNS = 'id, name, status, balance, created_at';
const STATEMENT_CACHE_LIMIT = 256;
const KEY_CACHE_LIMIT = 100_000;
const MULTI_ROW_CHUNK = 64;
const OUTCOME_FLUSH_MS = 50;
const DOCUMENT_CACHE_CHARS = 32 * 1024 * 1024;

function toKey(row: KeyRow | undefined): KeyRecord | undefined {
  return row && { id: row.id, name: row.name, status: row.status, balance: row.balance, createdAt: row.created_at };
}

function open(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // NORMAL in WAL mode: a commit survives a crash of the process (not of the OS), at a fraction of FULL's cost.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}

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

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  private readonly ledger: Database.Database;
  private readonly corpus: Database.Database;
  private readonly debits: GroupCommit<DebitJob, DebitResult>;
  private pendingOutcomes: Array<[number, number]> = [];
  private outcomeFlushScheduled = false;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly ledgerStatements = new Map<string, Database.Statement>();
  /**
   * Caches of rows, dropped whenever another connection (the CLI, another worker) has committed to
   * their database; writes through this connection keep them current themselves. Keys by hash;
   * documents (as /document's JSON) by id, least recently used first out past DOCUMENT_CACHE_CHARS.
   */
  private readonly keyCache = new Map<string, KeyRecord>();
  private readonly documentCache = new Map<string, string | null>();
  private documentCacheChars = 0;
  private readonly ledgerWrites: ExternalWrites;
  private readonly corpusWrites: ExternalWrites;
  private readonly sql;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.ledger = open(join(dataDir, 'ledger.sqlite'));

    this.corpus = open(join(dataDir, 'corpus.sqlite'));
    migrateLedger(this.ledger);
    migrateCorpus(this.corpus);
    this.ledgerWrites = new ExternalWrites(this.ledger, dataDir, 'ledger.sqlite');
    this.corpusWrites = new ExternalWrites(this.corpus, dataDir, 'corpus.sqlite');
    const l = this.ledger;
    const c = this.corpus;
    this.sql = {
      insertKey: l.prepare('INSERT INTO keys (id, key_hash, name, status, balance, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
      insertGrant: l.prepare('INSERT INTO credit_grants (key_id, amount, reason, at) VALUES (?, ?, ?, ?)'),
      keyByHash: l.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE key_hash = ?`),
      keyById: l.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = ?`),
      allKeys: l.prepare(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, id`),
      topUp: l.prepare('UPDATE keys SET balance = balance + ? WHERE id = ?'),
      setStatus: l.prepare(`UPDATE keys SET status = ? WHERE id = ? AND status <> 'revoked'`),
      debit: l.prepare(
        `UPDATE keys SET balance = balance - MIN(balance, @count), last_debit = MIN(balance, @count)
         WHERE key_hash = @keyHash AND status = 'active' AND balance > 0 RETURNING id, balance, last_debit`,
      ),
      chargesByKey: l.prepare(
        'SELECT id, key_id, endpoint, at, outcome_status FROM charges WHERE key_id = ? ORDER BY id DESC LIMIT ?',
      ),
      countCharges: l.prepare('SELECT count(*) AS n FROM charges WHERE key_id = ?'),
      grantsByKey: l.prepare('SELECT key_id, amount, reason, at FROM credit_grants WHERE key_id = ? ORDER BY id'),
      ping: l.prepare('SELECT 1'),
      document: c.prepare('SELECT doc_id, title, text, metadata FROM documents WHERE doc_id = ?'),
      deleteDocument: c.prepare('DELETE FROM documents WHERE doc_id = ?'),
      insertDocument: c.prepare('INSERT INTO documents (doc_id, title, text, metadata) VALUES (?, ?, ?, ?)'),
      insertField: c.prepare('INSERT INTO doc_fields (doc_rowid, field, vtype, value) VALUES (?, ?, ?, ?)'),
      countDocuments: c.prepare('SELECT count(*) AS n FROM documents'),
    };
    this.debits = new GroupCommit((jobs) => this.runDebits(jobs));
  }

  async createKey(input: { keyHash: string; id: string; name: string; credits: number }): Promise<KeyRecord> {
    const createdAt = new Date().toISOString();
    this.ledger.transaction(() => {
      this.sql.insertKey.run(input.id, input.keyHash, input.name, 'active', input.credits, createdAt);
      this.sql.insertGrant.run(input.id, input.credits, 'create', createdAt);
    })();
    return { id: input.id, name: input.name, status: 'active', balance: input.credits, createdAt };
  }

  async findKeyByHash(keyHash: string): Promise<KeyRecord | undefined> {
    if (this.ledgerWrites.happened()) this.keyCache.clear();
    const cached = this.keyCache.get(keyHash);
    if (cached) return cached;
    const key = toKey(this.sql.keyByHash.get(keyHash) as KeyRow | undefined);
    if (key) {
      if (this.keyCache.size >= KEY_CACHE_LIMIT) this.keyCache.clear();
      this.keyCache.set(keyHash, key);
    }
    return key;
  }

  async findKeyById(id: string): Promise<KeyRecord | undefined> {
    return toKey(this.sql.keyById.get(id) as KeyRow | undefined);
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (this.sql.allKeys.all() as KeyRow[]).map((row) => toKey(row)!);
  }

  async topUp(keyId: string, amount: number): Promise<KeyRecord | undefined> {
    this.keyCache.clear();
    return this.ledger.transaction(() => {
      if (this.sql.topUp.run(amount, keyId).changes === 0) return undefined;
      this.sql.insertGrant.run(keyId, amount, 'topup', new Date().toISOString());
      return toKey(this.sql.keyById.get(keyId) as KeyRow);
    }).immediate();
  }

  async setKeyStatus(keyId: string, status: KeyStatus): Promise<KeyRecord | undefined> {
    this.keyCache.clear();
    return this.ledger.transaction(() => {
      this.sql.setStatus.run(status, keyId);
      return toKey(this.sql.keyById.get(keyId) as KeyRow | undefined);
    }).immediate();
  }

  debit(keyHash: string, endpoint: string): Promise<DebitResult> {
    return this.debits.submit({ keyHash, endpoint });
  }

  /**
   * One transaction for the whole batch, and per key one conditional statement: it takes
   * MIN(balance, n) credits for the key's n requests in the batch and records in last_debit how
   * many it took (SET expressions read the row as it was), so the balance can never go negative
   * and exactly that many requests are charged. The charges are appended in multi-row inserts.
   */
  private runDebits(jobs: DebitJob[]): DebitResult[] {
    const run = this.ledger.transaction(() => {
      this.writeOutcomes();
      const at = new Date().toISOString();
      const results = new Array<DebitResult>(jobs.length);
      const byKey = new Map<string, number[]>();
      jobs.forEach((job, index) => {
        const indexes = byKey.get(job.keyHash);
        if (indexes) indexes.push(index);
        else byKey.set(job.keyHash, [index]);
      });
      const charged: Array<{ index: number; keyId: string; balance: number }> = [];
      for (const [keyHash, indexes] of byKey) {
        const debited = this.sql.debit.get({ keyHash, count: indexes.length }) as
          | { id: string; balance: number; last_debit: number }
          | undefined;
        const granted = debited?.last_debit ?? 0;
        for (let order = 0; order < granted; order++) {
          charged.push({ index: indexes[order]!, keyId: debited!.id, balance: debited!.balance + granted - 1 - order });
        }
        if (granted < indexes.length) {
          const refusal = granted > 0 ? ({ outcome: 'no-credits' } as const) : this.refusal(keyHash);
          for (const index of indexes.slice(granted)) results[index] = refusal;
        }
        const cached = this.keyCache.get(keyHash);
        if (cached && debited) this.keyCache.set(keyHash, { ...cached, balance: debited.balance });
      }
      const rows = charged.map((charge) => [charge.keyId, jobs[charge.index]!.endpoint, at]);
      let position = 0;
      for (const chunk of this.inChunks(rows)) {
        const lastId = Number(this.multiRow('INSERT INTO charges (key_id, endpoint, at) VALUES ', '(?, ?, ?)', '', chunk.length).run(chunk.flat()).lastInsertRowid);
        // Rows of one INSERT take consecutive rowids in VALUES order (charges are never deleted).
        for (let offset = 0; offset < chunk.length; offset++, position++) {
          const charge = charged[position]!;
          results[charge.index] = { outcome: 'charged', balance: charge.balance, chargeId: lastId - chunk.length + 1 + offset };
        }
      }
      return results;
    });
    try {
      return run.immediate();
    } catch (error) {
      this.keyCache.clear();
      throw error;
    }
  }

  private refusal(keyHash: string): DebitResult {
    const key = this.sql.keyByHash.get(keyHash) as KeyRow | undefined;
    if (!key) return { outcome: 'unknown-key' };
    if (key.status !== 'active') return { outcome: 'inactive', status: key.status };
    return { outcome: 'no-credits' };
  }

  recordOutcome(chargeId: number, status: number): void {
    this.pendingOutcomes.push([chargeId, status]);
    if (!this.outcomeFlushScheduled) {
      this.outcomeFlushScheduled = true;
      // Under load the next debit batch writes these; the timer covers a quiet moment.
      setTimeout(() => {
        this.outcomeFlushScheduled = false;
        if (this.pendingOutcomes.length > 0 && this.ledger.open) this.ledger.transaction(() => this.writeOutcomes()).immediate();
      }, OUTCOME_FLUSH_MS).unref();
    }
  }

  private writeOutcomes(): void {
    // First outcome per charge wins, as a later batch's "IS NULL" guard would ensure.
    const outcomes = [...new Map(this.pendingOutcomes.reverse()).entries()];
    this.pendingOutcomes = [];
    for (const chunk of this.inChunks(outcomes)) {
      this.multiRow(
        'UPDATE charges SET outcome_status = outcome.column2 FROM (VALUES ',
        '(?, ?)',
        ') AS outcome WHERE charges.id = outcome.column1 AND charges.outcome_status IS NULL',
        chunk.length,
      ).run(chunk.flat());
    }
  }

  private *inChunks<T>(rows: T[]): Generator<T[]> {
    for (let start = 0; start < rows.length; start += MULTI_ROW_CHUNK) yield rows.slice(start, start + MULTI_ROW_CHUNK);
  }

  /** A ledger statement repeating `row` count times, prepared once per shape. */
  private multiRow(prefix: string, row: string, suffix: string, count: number): Database.Statement {
    const sql = `${prefix}${Array.from({ length: count }, () => row).join(', ')}${suffix}`;
    let statement = this.ledgerStatements.get(sql);
    if (!statement) {
      statement = this.ledger.prepare(sql);
      this.ledgerStatements.set(sql, statement);
    }
    return statement;
  }

  async listCharges(keyId: string, limit = 100): Promise<ChargeRecord[]> {
    const rows = this.sql.chargesByKey.all(keyId, limit) as Array<{
      id: number;
      key_id: string;
      endpoint: string;
      at: string;
      outcome_status: number | null;
    }>;
    return rows.map((row) => ({
      id: row.id,
      keyId: row.key_id,
      endpoint: row.endpoint,
      at: row.at,
      outcomeStatus: row.outcome_status,
    }));
  }

  async countCharges(keyId: string): Promise<number> {
    return (this.sql.countCharges.get(keyId) as { n: number }).n;
  }

  async listGrants(keyId: string): Promise<CreditGrant[]> {
    const rows = this.sql.grantsByKey.all(keyId) as Array<{ key_id: string; amount: number; reason: CreditGrant['reason']; at: string }>;
    return rows.map((row) => ({ keyId: row.key_id, amount: row.amount, reason: row.reason, at: row.at }));
  }

  async getDocumentJson(docId: string): Promise<string | undefined> {
    if (this.corpusWrites.happened()) this.dropDocumentCache();
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
    this.corpus.exec('BEGIN IMMEDIATE');
    let count = 0;
    try {
      for await (const document of source) {
        this.writeDocument(document);
        count++;
        if (onProgress && count % 1000 === 0) onProgress({ documents: count });
      }
      this.corpus.exec('COMMIT');
      this.dropDocumentCache();
    } catch (error) {
      if (this.corpus.inTransaction) this.corpus.exec('ROLLBACK');
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
    let matches: string;
    if (request.field.kind === 'metadata') {
      params.push(matchExpression(request.terms), request.field.name);
      // MATERIALIZED keeps SQLite from folding bm25() into the aggregate, where it cannot run.
      matches = `WITH field_hits AS MATERIALIZED (
          SELECT doc_fields_fts.rowid AS fid, -bm25(doc_fields_fts) AS s FROM doc_fields_fts WHERE doc_fields_fts MATCH ?
        ) SELECT f.doc_rowid AS id, max(s) AS score FROM field_hits JOIN doc_fields f ON f.id = fid
        WHERE f.field = ? GROUP BY f.doc_rowid`;
    } else {
      const column = request.field.kind === 'all' ? undefined : request.field.kind;
      params.push(matchExpression(request.terms, column));
      // Title matches weigh twice as much as body matches: titles are short and chosen with care.
      matches = `SELECT rowid AS id, -bm25(documents_fts, 2.0, 1.0) AS score FROM documents_fts WHERE documents_fts MATCH ?`;
    }
    const filters = request.filters.map((filter) => {
      params.push(filter.field);
      return `AND m.id IN (SELECT doc_rowid FROM doc_fields WHERE field = ? AND (${filterCondition(filter.anyOf, params)}))`;
    });
    const filtered = `SELECT m.id, m.score FROM (${matches}) m WHERE 1 ${filters.join(' ')}`;
    const total = (this.statement(`SELECT count(*) AS n FROM (${filtered})`).get(...params) as { n: number }).n;
    if (total === 0) return { total, hits: [] };
    const hits = this.statement(
      `SELECT d.doc_id AS docId, d.title AS title, r.score AS score FROM (${filtered}) r
       JOIN documents d ON d.id = r.id ORDER BY r.score DESC, d.doc_id LIMIT ?`,
    ).all(...params, request.topK) as SearchResult['hits'];
    return { total, hits };
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= STATEMENT_CACHE_LIMIT) this.statements.clear();
      statement = this.corpus.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async ping(): Promise<number> {
    const started = performance.now();
    this.sql.ping.get();
    return performance.now() - started;
  }

  async close(): Promise<void> {
    this.ledgerWrites.close();
    this.corpusWrites.close();
    this.debits.flush();
    if (this.pendingOutcomes.length > 0) this.ledger.transaction(() => this.writeOutcomes()).immediate();
    this.ledger.close();
    this.corpus.close();
  }
}
