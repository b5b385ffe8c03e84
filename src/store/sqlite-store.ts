import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { BackgroundCheckpoint } from '../platform/background-checkpoint.js';
import { positionsByKey, refusalFor, topUpRefusal } from '../billing/debit-batch.js';
import { ExternalWrites } from '../platform/external-writes.js';
import { GroupCommit } from '../billing/group-commit.js';
import { INDEX_UPKEEP, SqliteCorpus } from '../search/sqlite-corpus.js';
import { SqliteFaces } from '../faces/sqlite-gallery.js';
import { SqliteIdempotency } from '../idempotency/sqlite-idempotency.js';
import { openSqlite } from '../platform/sqlite-open.js';
import { migrateLedger } from './sqlite-schema.js';
import type {
  ChargeRecord,
  CreditGrant,
  DebitResult,
  DocumentRecord,
  IngestProgress,
  KeyRecord,
  KeyStatus,
  LedgerAudit,
  SearchRequest,
  SearchResult,
  Store,
  TopUpResult,
} from './store.js';

interface KeyRow {
  id: string;
  name: string;
  status: KeyStatus;
  balance: number;
  created_at: string;
  rate_limit: number | null;
}

interface DebitJob {
  keyHash: string;
  endpoint: string;
  idempotencyRef: string | null;
}

const KEY_COLUMNS = 'id, name, status, balance, created_at, rate_limit';
const KEY_CACHE_LIMIT = 100_000;
const MULTI_ROW_CHUNK = 64;
const OUTCOME_FLUSH_MS = 50;
const OUTCOME_RETRY_MS = 1000;

function toKey(row: KeyRow | undefined): KeyRecord | undefined {
  return row && { id: row.id, name: row.name, status: row.status, balance: row.balance, createdAt: row.created_at, rateLimit: row.rate_limit };
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  private readonly ledger: Database.Database;
  private readonly corpus: SqliteCorpus;
  private readonly debits: GroupCommit<DebitJob, DebitResult>;
  private pendingOutcomes: Array<[number, number]> = [];
  private outcomeFlushScheduled = false;
  private readonly ledgerStatements = new Map<string, Database.Statement>();
  /**
   * Keys by hash, as last read or written through this connection; dropped whenever another
   * connection (the CLI, another worker) has committed to the ledger.
   */
  private readonly keyCache = new Map<string, KeyRecord>();
  private readonly ledgerWrites: ExternalWrites;
  private readonly sql;

  private readonly checkpoints: BackgroundCheckpoint | undefined;
  private readonly corpusCheckpoints: BackgroundCheckpoint | undefined;
  readonly idempotency: SqliteIdempotency;
  readonly faces: SqliteFaces;

  /**
   * `backgroundCheckpoints`: for a long-running service, checkpoint the WALs in worker threads.
   * `searchThreads`: see Config.searchThreads; 1 when not given.
   */
  constructor(dataDir: string, options: { backgroundCheckpoints?: boolean; searchThreads?: number } = {}) {
    mkdirSync(dataDir, { recursive: true });
    this.ledger = openSqlite(join(dataDir, 'ledger.sqlite'));
    migrateLedger(this.ledger);
    if (options.backgroundCheckpoints) {
      // The worker copies WAL pages and fsyncs; this connection checkpoints only as a backstop that
      // bounds the WAL (about 40 MB), finding little left to copy when it does.
      this.ledger.pragma('wal_autocheckpoint = 10000');
      this.checkpoints = new BackgroundCheckpoint(join(dataDir, 'ledger.sqlite'));
      void this.checkpoints.stopped.then(() => {
        if (this.ledger.open) this.ledger.pragma('wal_autocheckpoint = 1000');
      });
    }

    this.corpus = new SqliteCorpus(dataDir, { ...INDEX_UPKEEP, searchThreads: options.searchThreads ?? 1 });
    // A large ingest by the CLI leaves its WAL to be copied into the corpus file; the service does
    // that off the event loop too.
    if (options.backgroundCheckpoints) this.corpusCheckpoints = new BackgroundCheckpoint(join(dataDir, 'corpus.sqlite'));
    this.ledgerWrites = new ExternalWrites(this.ledger, dataDir, 'ledger.sqlite');
    const l = this.ledger;
    this.sql = {
      insertKey: l.prepare('INSERT INTO keys (id, key_hash, name, status, balance, created_at, rate_limit) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      insertGrant: l.prepare('INSERT INTO credit_grants (key_id, amount, reason, at) VALUES (?, ?, ?, ?)'),
      keyByHash: l.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE key_hash = ?`),
      keyById: l.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = ?`),
      allKeys: l.prepare(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, id`),
      topUp: l.prepare('UPDATE keys SET balance = balance + ? WHERE id = ?'),
      setStatus: l.prepare(`UPDATE keys SET status = ? WHERE id = ? AND status <> 'revoked'`),
      setRateLimit: l.prepare('UPDATE keys SET rate_limit = ? WHERE id = ?'),
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
    };
    this.debits = new GroupCommit((jobs) => this.runDebits(jobs));
    this.idempotency = new SqliteIdempotency(l);
    this.faces = new SqliteFaces(l);
  }

  async createKey(input: { keyHash: string; id: string; name: string; credits: number; rateLimit?: number | null }): Promise<KeyRecord> {
    const createdAt = new Date().toISOString();
    this.ledger.transaction(() => {
      this.sql.insertKey.run(input.id, input.keyHash, input.name, 'active', input.credits, createdAt, input.rateLimit ?? null);
      this.sql.insertGrant.run(input.id, input.credits, 'create', createdAt);
    })();
    return { id: input.id, name: input.name, status: 'active', balance: input.credits, createdAt, rateLimit: input.rateLimit ?? null };
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

  async topUp(keyId: string, amount: number): Promise<TopUpResult> {
    this.keyCache.clear();
    return this.ledger.transaction((): TopUpResult => {
      const key = toKey(this.sql.keyById.get(keyId) as KeyRow | undefined);
      const refusal = topUpRefusal(key, amount);
      if (refusal) return refusal;
      this.sql.topUp.run(amount, keyId);
      this.sql.insertGrant.run(keyId, amount, 'topup', new Date().toISOString());
      return { outcome: 'topped-up', key: toKey(this.sql.keyById.get(keyId) as KeyRow)! };
    }).immediate();
  }

  async setKeyRateLimit(keyId: string, rateLimit: number | null): Promise<KeyRecord | undefined> {
    this.keyCache.clear();
    return this.ledger.transaction(() => {
      this.sql.setRateLimit.run(rateLimit, keyId);
      return toKey(this.sql.keyById.get(keyId) as KeyRow | undefined);
    }).immediate();
  }

  async setKeyStatus(keyId: string, status: KeyStatus): Promise<KeyRecord | undefined> {
    this.keyCache.clear();
    return this.ledger.transaction(() => {
      this.sql.setStatus.run(status, keyId);
      return toKey(this.sql.keyById.get(keyId) as KeyRow | undefined);
    }).immediate();
  }

  debit(keyHash: string, endpoint: string, idempotencyRef?: string): Promise<DebitResult> {
    return this.debits.submit({ keyHash, endpoint, idempotencyRef: idempotencyRef ?? null });
  }

  /**
   * One transaction for the whole batch, and per key one conditional statement: it takes
   * MIN(balance, n) credits for the key's n requests in the batch and records in last_debit how
   * many it took (SET expressions read the row as it was), so the balance can never go negative
   * and exactly that many requests are charged. The charges are appended in multi-row inserts.
   */
  private runDebits(jobs: DebitJob[]): DebitResult[] {
    const debitAll = (): DebitResult[] => {
      const at = new Date().toISOString();
      const results = new Array<DebitResult>(jobs.length);
      const byKey = positionsByKey(jobs);
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
          const refusal = granted > 0 ? refusalFor('active') : refusalFor((this.sql.keyByHash.get(keyHash) as KeyRow | undefined)?.status);
          for (const index of indexes.slice(granted)) results[index] = refusal;
        }
        const cached = this.keyCache.get(keyHash);
        if (cached && debited) this.keyCache.set(keyHash, { ...cached, balance: debited.balance });
      }
      const rows = charged.map((charge) => [charge.keyId, jobs[charge.index]!.endpoint, at, jobs[charge.index]!.idempotencyRef]);
      let position = 0;
      for (const chunk of this.inChunks(rows)) {
        const lastId = Number(this.multiRow('INSERT INTO charges (key_id, endpoint, at, idempotency_ref) VALUES ', '(?, ?, ?, ?)', '', chunk.length).run(chunk.flat()).lastInsertRowid);
        // Rows of one INSERT take consecutive rowids in VALUES order (charges are never deleted).
        for (let offset = 0; offset < chunk.length; offset++, position++) {
          const charge = charged[position]!;
          results[charge.index] = { outcome: 'charged', balance: charge.balance, chargeId: lastId - chunk.length + 1 + offset };
        }
      }
      return results;
    };
    try {
      return this.withOutcomes(debitAll);
    } catch (error) {
      this.keyCache.clear();
      throw error;
    }
  }

  recordOutcome(chargeId: number, status: number): void {
    this.pendingOutcomes.push([chargeId, status]);
    this.scheduleOutcomeFlush(OUTCOME_FLUSH_MS);
  }

  /** Under load the next debit batch writes the outcomes; this timer covers a quiet moment. */
  private scheduleOutcomeFlush(delay: number): void {
    if (this.outcomeFlushScheduled) return;
    this.outcomeFlushScheduled = true;
    setTimeout(() => {
      this.outcomeFlushScheduled = false;
      if (this.pendingOutcomes.length === 0 || !this.ledger.open) return;
      try {
        this.withOutcomes(() => undefined);
      } catch {
        // The ledger cannot be written (a full disk, say): the outcomes wait for the next try.
        this.scheduleOutcomeFlush(OUTCOME_RETRY_MS);
      }
    }, delay).unref();
  }

  /**
   * Runs `work` in an immediate ledger transaction that first writes the pending outcomes; if the
   * transaction fails, they stay pending.
   */
  private withOutcomes<T>(work: () => T): T {
    const outcomes = this.pendingOutcomes;
    this.pendingOutcomes = [];
    try {
      return this.ledger.transaction(() => {
        this.writeOutcomes(outcomes);
        return work();
      }).immediate();
    } catch (error) {
      this.pendingOutcomes = outcomes.concat(this.pendingOutcomes);
      throw error;
    }
  }

  private writeOutcomes(pending: Array<[number, number]>): void {
    // First outcome per charge wins, as a later batch's "IS NULL" guard would ensure.
    const outcomes = [...new Map([...pending].reverse()).entries()];
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

  async auditLedger(): Promise<LedgerAudit[]> {
    // One read transaction: charges and balances as of the same moment.
    const rows = this.ledger
      .prepare(
        `SELECT key_id, balance, granted, charged, granted - charged = balance AND balance >= 0 AS consistent FROM (
           SELECT k.id AS key_id, k.balance,
             (SELECT coalesce(sum(g.amount), 0) FROM credit_grants g WHERE g.key_id = k.id) AS granted,
             (SELECT count(*) FROM charges c WHERE c.key_id = k.id) AS charged
           FROM keys k) ORDER BY key_id`,
      )
      .all() as Array<{ key_id: string; balance: number; granted: number; charged: number; consistent: number }>;
    return rows.map((row) => ({ keyId: row.key_id, granted: row.granted, charged: row.charged, balance: row.balance, consistent: row.consistent === 1 }));
  }

  async auditIdempotentCharges(): Promise<Array<{ ref: string; charges: number }>> {
    return this.ledger
      .prepare('SELECT idempotency_ref AS ref, count(*) AS charges FROM charges WHERE idempotency_ref IS NOT NULL GROUP BY idempotency_ref HAVING count(*) > 1')
      .all() as Array<{ ref: string; charges: number }>;
  }

  getDocumentJson(docId: string): Promise<string | undefined> {
    return this.corpus.getDocumentJson(docId);
  }

  getDocument(docId: string): Promise<DocumentRecord | undefined> {
    return this.corpus.getDocument(docId);
  }

  ingestDocuments(source: AsyncIterable<DocumentRecord>, onProgress?: (progress: IngestProgress) => void): Promise<number> {
    return this.corpus.ingestDocuments(source, onProgress);
  }

  deleteDocument(docId: string): Promise<boolean> {
    return this.corpus.deleteDocument(docId);
  }

  countDocuments(): Promise<number> {
    return this.corpus.countDocuments();
  }

  async prepareSearch(): Promise<void> {
    await this.corpus.prepareSearch();
  }

  search(request: SearchRequest): Promise<SearchResult> {
    return this.corpus.search(request);
  }

  async ping(): Promise<number> {
    const started = performance.now();
    this.sql.ping.get();
    return performance.now() - started;
  }

  async close(): Promise<void> {
    await this.checkpoints?.close();
    await this.corpusCheckpoints?.close();
    this.ledgerWrites.close();
    this.debits.flush();
    try {
      if (this.pendingOutcomes.length > 0) this.withOutcomes(() => undefined);
    } finally {
      this.ledger.close();
      this.corpus.close();
    }
  }
}
