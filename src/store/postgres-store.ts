import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { positionsByKey, refusalFor, topUpRefusal } from '../billing/debit-batch.js';
import { PostgresFaces } from '../faces/postgres-gallery.js';
import { PostgresIdempotency } from '../idempotency/postgres-idempotency.js';
import { migratePostgres } from './postgres-schema.js';
import { INDEX_UPKEEP, SqliteCorpus, type DocumentChange } from '../search/sqlite-corpus.js';
import {
  StoreUnavailableError,
  type ChargeRecord,
  type CreditGrant,
  type DebitResult,
  type DocumentRecord,
  type IngestProgress,
  type KeyRecord,
  type KeyStatus,
  type LedgerAudit,
  type SearchRequest,
  type SearchResult,
  type Store,
  type TopUpResult,
} from './store.js';

export interface PostgresOptions {
  url: string;
  poolMax: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /** How often the local search replica asks for new document changes. */
  replicaPollMs: number;
  /** See Config.searchThreads; 1 when not given. */
  searchThreads?: number;
}

interface KeyRow {
  id: string;
  name: string;
  status: KeyStatus;
  balance: number;
  created_at: Date;
  rate_limit: number | null;
}

interface DebitJob {
  keyHash: string;
  endpoint: string;
  idempotencyRef: string | null;
  resolve: (result: DebitResult) => void;
  reject: (error: unknown) => void;
}

const KEY_COLUMNS = 'id, name, status, balance, created_at, rate_limit';
/** Serialises document writers, so that document seq order is commit order. */
const DOCUMENT_WRITE_LOCK = 7_204_311_902;
const INGEST_BATCH = 500;
const REPLICA_BATCH = 5000;
const OUTCOME_FLUSH_MS = 50;
const OUTCOME_RETRY_MS = 1000;
/**
 * Debit statements in flight at once. One: debits arriving while it runs wait and go together in
 * the next, so batches grow with load and PostgreSQL runs fewer, larger statements. Measured on 2
 * cores shared with PostgreSQL (BENCHMARKS.md, session 4): against two in flight, +23% requests/s and
 * a third less PostgreSQL CPU per request.
 */
const MAX_DEBIT_BATCHES = 1;
const UNAVAILABLE_MESSAGES = /Connection terminated|timeout exceeded|connection error|ECONNREFUSED|Connection refused/i;

function toKey(row: KeyRow | undefined): KeyRecord | undefined {
  return (
    row && {
      id: row.id,
      name: row.name,
      status: row.status,
      balance: row.balance,
      createdAt: row.created_at.toISOString(),
      rateLimit: row.rate_limit,
    }
  );
}

/** Connection trouble, server shutdown, resource exhaustion and timeouts: worth a retry later. */
function isUnavailable(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  if (typeof code === 'string' && (/^(08|53|57)/.test(code) || /^E[A-Z]+$/.test(code))) return true;
  return UNAVAILABLE_MESSAGES.test(message ?? '');
}

/** bigint (int8) columns as numbers: balances and ids stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/**
 * The scale-out store: keys, balances, charges and documents in PostgreSQL, shared by any number of
 * instances. Debits follow the embedded store's design (per key and batch, one conditional
 * UPDATE taking LEAST(balance, n)); searches run on a local SQLite replica of the corpus that
 * follows the documents' change log, so ranking is the embedded store's, exactly.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres';
  private readonly pool: pg.Pool;
  private pendingDebits: DebitJob[] = [];
  private readonly debitsInFlight = new Set<Promise<void>>();
  private debitScheduled = false;
  private pendingOutcomes: Array<[number, number]> = [];
  private outcomeTimer: NodeJS.Timeout | undefined;
  private replica: { corpus: SqliteCorpus; dir: string; seq: number } | undefined;
  private replicaReady: Promise<void> | undefined;
  private replicaTimer: NodeJS.Timeout | undefined;
  private replicaSync: Promise<void> | undefined;
  private closed = false;
  readonly idempotency: PostgresIdempotency;
  readonly faces: PostgresFaces;

  private constructor(private readonly options: PostgresOptions) {
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolMax,
      connectionTimeoutMillis: options.connectTimeoutMs,
      statement_timeout: options.statementTimeoutMs,
      query_timeout: options.statementTimeoutMs + 1000,
      types,
    });
    // A client losing its server (idle, in use, or already released after a failed query) must not
    // crash the process: the query in flight fails on its own, and the next one reconnects.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => client.on('error', () => undefined));
    this.idempotency = new PostgresIdempotency(
      (sql, params, name) => this.query(sql, params, name),
      (work) => this.transaction(work),
    );
    this.faces = new PostgresFaces(
      (sql, params, name) => this.query(sql, params, name),
      (work) => this.transaction(work),
    );
  }

  /** Connects and applies pending migrations. */
  static async open(options: PostgresOptions): Promise<PostgresStore> {
    const store = new PostgresStore(options);
    try {
      await migratePostgres(store.pool);
    } catch (error) {
      await store.pool.end();
      throw error;
    }
    return store;
  }

  static async migrate(options: PostgresOptions): Promise<number[]> {
    const store = new PostgresStore(options);
    try {
      return await migratePostgres(store.pool);
    } finally {
      await store.pool.end();
    }
  }

  /** A named query is prepared once per connection: the hot statements skip parsing and planning. */
  private async query<Row extends pg.QueryResultRow>(sql: string, params: unknown[] = [], name?: string): Promise<pg.QueryResult<Row>> {
    try {
      return await this.pool.query<Row>(name ? { name, text: sql, values: params } : { text: sql, values: params });
    } catch (error) {
      throw isUnavailable(error) ? new StoreUnavailableError({ cause: error }) : error;
    }
  }

  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw isUnavailable(error) ? new StoreUnavailableError({ cause: error }) : error;
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw isUnavailable(error) ? new StoreUnavailableError({ cause: error }) : error;
    } finally {
      client.release(broken);
    }
  }

  async createKey(input: { keyHash: string; id: string; name: string; credits: number; rateLimit?: number | null }): Promise<KeyRecord> {
    return this.transaction(async (client) => {
      const { rows } = await client.query<KeyRow>(
        `INSERT INTO keys (id, key_hash, name, status, balance, rate_limit) VALUES ($1, $2, $3, 'active', $4, $5) RETURNING ${KEY_COLUMNS}`,
        [input.id, input.keyHash, input.name, input.credits, input.rateLimit ?? null],
      );
      await client.query(`INSERT INTO credit_grants (key_id, amount, reason) VALUES ($1, $2, 'create')`, [input.id, input.credits]);
      return toKey(rows[0])!;
    });
  }

  async findKeyByHash(keyHash: string): Promise<KeyRecord | undefined> {
    return toKey((await this.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM keys WHERE key_hash = $1`, [keyHash], 'key-by-hash')).rows[0]);
  }

  async findKeyById(id: string): Promise<KeyRecord | undefined> {
    return toKey((await this.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1`, [id])).rows[0]);
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, id`)).rows.map((row) => toKey(row)!);
  }

  async topUp(keyId: string, amount: number): Promise<TopUpResult> {
    return this.transaction(async (client): Promise<TopUpResult> => {
      const locked = await client.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1 FOR UPDATE`, [keyId]);
      const refusal = topUpRefusal(toKey(locked.rows[0]), amount);
      if (refusal) return refusal;
      const { rows } = await client.query<KeyRow>(`UPDATE keys SET balance = balance + $2 WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [
        keyId,
        amount,
      ]);
      await client.query(`INSERT INTO credit_grants (key_id, amount, reason) VALUES ($1, $2, 'topup')`, [keyId, amount]);
      return { outcome: 'topped-up', key: toKey(rows[0])! };
    });
  }

  async setKeyRateLimit(keyId: string, rateLimit: number | null): Promise<KeyRecord | undefined> {
    return toKey((await this.query<KeyRow>(`UPDATE keys SET rate_limit = $2 WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId, rateLimit])).rows[0]);
  }

  async setKeyStatus(keyId: string, status: KeyStatus): Promise<KeyRecord | undefined> {
    await this.query(`UPDATE keys SET status = $2 WHERE id = $1 AND status <> 'revoked'`, [keyId, status]);
    return this.findKeyById(keyId);
  }

  /**
   * Debits arriving in the same turn of the event loop, or while the previous batch runs, go in
   * one batch; at most MAX_DEBIT_BATCHES batches are in flight.
   */
  debit(keyHash: string, endpoint: string, idempotencyRef?: string): Promise<DebitResult> {
    return new Promise((resolve, reject) => {
      this.pendingDebits.push({ keyHash, endpoint, idempotencyRef: idempotencyRef ?? null, resolve, reject });
      this.scheduleDebits();
    });
  }

  private scheduleDebits(): void {
    if (this.debitScheduled || this.pendingDebits.length === 0 || this.debitsInFlight.size >= MAX_DEBIT_BATCHES) return;
    this.debitScheduled = true;
    setImmediate(() => {
      this.debitScheduled = false;
      if (this.debitsInFlight.size >= MAX_DEBIT_BATCHES) return;
      const jobs = this.pendingDebits;
      this.pendingDebits = [];
      const batch = this.debitBatch(jobs).then(
        (results) => jobs.forEach((job, index) => job.resolve(results[index]!)),
        (error) => jobs.forEach((job) => job.reject(error)),
      );
      this.debitsInFlight.add(batch);
      void batch.finally(() => {
        this.debitsInFlight.delete(batch);
        this.scheduleDebits();
      });
      this.scheduleDebits();
    });
  }

  /**
   * The whole batch in one statement (the debit_batch function, migration 5; debit_one_key,
   * migration 7, when the batch is one key's), so one round trip and no row lock held across the
   * network: per key one conditional UPDATE taking LEAST(balance, n) credits for its n requests,
   * the charges of the requests it covered (a key's first ones, in order), and, read from the same
   * snapshot, why a key that took nothing was refused.
   */
  private async debitBatch(jobs: DebitJob[]): Promise<DebitResult[]> {
    const positions = positionsByKey(jobs);
    const endpoints = jobs.map((job) => job.endpoint);
    const refs = jobs.map((job) => job.idempotencyRef);
    let statement: { text: string; values: unknown[]; name: string };
    if (positions.size === 1) {
      statement = {
        text: 'SELECT key_hash, balance, granted, status, charge_ids FROM debit_one_key($1, $2, $3)',
        values: [jobs[0]!.keyHash, endpoints, refs],
        name: 'debit-one-key',
      };
    } else {
      // Each debit's rank among its key's debits: the first `granted` of a key are the charged ones.
      const ordinals = new Array<number>(jobs.length);
      for (const indexes of positions.values()) indexes.forEach((index, order) => (ordinals[index] = order + 1));
      statement = {
        text: 'SELECT key_hash, balance, granted, status, charge_ids FROM debit_batch($1, $2, $3, $4)',
        values: [jobs.map((job) => job.keyHash), endpoints, ordinals, refs],
        name: 'debit-batch',
      };
    }
    const { rows } = await this.query<{
      key_hash: string;
      balance: number | null;
      granted: number | null;
      charge_ids: number[] | null;
      status: KeyStatus | null;
    }>(statement.text, statement.values, statement.name);
    const results = new Array<DebitResult>(jobs.length);
    for (const row of rows) {
      const indexes = positions.get(row.key_hash)!;
      const granted = row.granted ?? 0;
      // Charge ids come from one sequence in the order of the requests, which ORDER BY position fixes.
      indexes.slice(0, granted).forEach((index, order) => {
        results[index] = { outcome: 'charged', balance: row.balance! + granted - 1 - order, chargeId: Number(row.charge_ids![order]) };
      });
      const refusal = refusalFor(granted > 0 ? 'active' : (row.status ?? undefined));
      for (const index of indexes.slice(granted)) results[index] = refusal;
    }
    return results;
  }

  recordOutcome(chargeId: number, status: number): void {
    this.pendingOutcomes.push([chargeId, status]);
    this.outcomeTimer ??= setTimeout(() => void this.flushOutcomes(), OUTCOME_FLUSH_MS).unref();
  }

  private async flushOutcomes(): Promise<void> {
    this.outcomeTimer = undefined;
    const pending = this.pendingOutcomes;
    this.pendingOutcomes = [];
    if (pending.length === 0) return;
    // First outcome per charge wins, as the "IS NULL" guard ensures across flushes.
    const outcomes = [...new Map([...pending].reverse()).entries()];
    await this.query(
      'SELECT record_outcomes($1, $2)',
      [outcomes.map(([id]) => id), outcomes.map(([, status]) => status)],
    ).catch(() => {
      // PostgreSQL is away: the outcomes wait for the next try.
      this.pendingOutcomes = pending.concat(this.pendingOutcomes);
      if (!this.closed) this.outcomeTimer ??= setTimeout(() => void this.flushOutcomes(), OUTCOME_RETRY_MS).unref();
    });
  }

  async listCharges(keyId: string, limit = 100): Promise<ChargeRecord[]> {
    const { rows } = await this.query<{ id: number; key_id: string; endpoint: string; at: Date; outcome_status: number | null }>(
      `SELECT id, key_id, endpoint, at, COALESCE(outcome_status, charge_outcome(id)) AS outcome_status
       FROM charges WHERE key_id = $1 ORDER BY id DESC LIMIT $2`,
      [keyId, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      keyId: row.key_id,
      endpoint: row.endpoint,
      at: row.at.toISOString(),
      outcomeStatus: row.outcome_status,
    }));
  }

  async countCharges(keyId: string): Promise<number> {
    return (await this.query<{ n: number }>('SELECT count(*) AS n FROM charges WHERE key_id = $1', [keyId])).rows[0]!.n;
  }

  async listGrants(keyId: string): Promise<CreditGrant[]> {
    const { rows } = await this.query<{ key_id: string; amount: number; reason: CreditGrant['reason']; at: Date }>(
      'SELECT key_id, amount, reason, at FROM credit_grants WHERE key_id = $1 ORDER BY id',
      [keyId],
    );
    return rows.map((row) => ({ keyId: row.key_id, amount: row.amount, reason: row.reason, at: row.at.toISOString() }));
  }

  async auditIdempotentCharges(): Promise<Array<{ ref: string; charges: number }>> {
    return (
      await this.query<{ ref: string; charges: number }>(
        'SELECT idempotency_ref AS ref, count(*)::integer AS charges FROM charges WHERE idempotency_ref IS NOT NULL GROUP BY idempotency_ref HAVING count(*) > 1',
      )
    ).rows;
  }

  async auditLedger(): Promise<LedgerAudit[]> {
    // One statement: one snapshot, so charges and balances are read as of the same moment.
    const { rows } = await this.query<{ key_id: string; balance: number; granted: number; charged: number; consistent: boolean }>(
      `SELECT key_id, balance, granted::bigint, charged, granted - charged = balance AND balance >= 0 AS consistent FROM (
         SELECT k.id AS key_id, k.balance,
           (SELECT coalesce(sum(g.amount), 0) FROM credit_grants g WHERE g.key_id = k.id) AS granted,
           (SELECT count(*) FROM charges c WHERE c.key_id = k.id) AS charged
         FROM keys k) AS ledger ORDER BY key_id`,
    );
    return rows.map((row) => ({ keyId: row.key_id, granted: row.granted, charged: row.charged, balance: row.balance, consistent: row.consistent }));
  }

  async getDocument(docId: string): Promise<DocumentRecord | undefined> {
    return (await this.corpus()).getDocument(docId);
  }

  async getDocumentJson(docId: string): Promise<string | undefined> {
    return (await this.corpus()).getDocumentJson(docId);
  }

  async prepareSearch(): Promise<void> {
    await (await this.corpus()).prepareSearch();
  }

  async search(request: SearchRequest): Promise<SearchResult> {
    return (await this.corpus()).search(request);
  }

  async countDocuments(): Promise<number> {
    return (await this.query<{ n: number }>('SELECT count(*) AS n FROM documents WHERE NOT deleted')).rows[0]!.n;
  }

  async ingestDocuments(source: AsyncIterable<DocumentRecord>, onProgress?: (progress: IngestProgress) => void): Promise<number> {
    const count = await this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [DOCUMENT_WRITE_LOCK]);
      let written = 0;
      let batch = new Map<string, DocumentRecord>();
      const writeBatch = async () => {
        const documents = [...batch.values()];
        batch = new Map();
        await client.query(
          `INSERT INTO documents (doc_id, title, text, metadata, deleted, seq)
           SELECT doc_id, title, text, metadata::json, false, nextval('document_seq')
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS batch(doc_id, title, text, metadata)
           ON CONFLICT (doc_id) DO UPDATE SET title = excluded.title, text = excluded.text,
             metadata = excluded.metadata, deleted = false, seq = excluded.seq`,
          [
            documents.map((document) => document.docId),
            documents.map((document) => document.title),
            documents.map((document) => document.text),
            documents.map((document) => JSON.stringify(document.metadata)),
          ],
        );
      };
      for await (const document of source) {
        // A later record with the same id replaces an earlier one, as in the embedded store.
        batch.delete(document.docId);
        batch.set(document.docId, document);
        written++;
        if (batch.size >= INGEST_BATCH) await writeBatch();
        if (onProgress && written % 1000 === 0) onProgress({ documents: written });
      }
      if (batch.size > 0) await writeBatch();
      return written;
    });
    onProgress?.({ documents: count });
    if (this.replica) await this.syncReplica();
    return count;
  }

  async deleteDocument(docId: string): Promise<boolean> {
    const deleted = await this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [DOCUMENT_WRITE_LOCK]);
      const { rowCount } = await client.query(
        `UPDATE documents SET deleted = true, seq = nextval('document_seq') WHERE doc_id = $1 AND NOT deleted`,
        [docId],
      );
      return (rowCount ?? 0) > 0;
    });
    if (this.replica) await this.syncReplica();
    return deleted;
  }

  /** The local search replica, created and caught up on first use, then kept following the change log. */
  private async corpus(): Promise<SqliteCorpus> {
    this.replicaReady ??= (async () => {
      const dir = mkdtempSync(join(tmpdir(), 'metered-search-replica-'));
      this.replica = { corpus: new SqliteCorpus(dir, { ...INDEX_UPKEEP, searchThreads: this.options.searchThreads ?? 1 }), dir, seq: 0 };
      await this.syncReplica();
      const poll = () => {
        this.replicaTimer = setTimeout(() => {
          this.syncReplica().catch(() => undefined).finally(() => !this.closed && poll());
        }, this.options.replicaPollMs);
        this.replicaTimer.unref();
      };
      poll();
    })().catch((error) => {
      this.replicaReady = undefined;
      throw error;
    });
    await this.replicaReady;
    return this.replica!.corpus;
  }

  private syncReplica(): Promise<void> {
    this.replicaSync ??= (async () => {
      const replica = this.replica!;
      for (;;) {
        const { rows } = await this.query<{
          doc_id: string;
          title: string;
          text: string;
          metadata: DocumentRecord['metadata'];
          deleted: boolean;
          seq: number;
        }>('SELECT doc_id, title, text, metadata, deleted, seq FROM documents WHERE seq > $1 ORDER BY seq LIMIT $2', [
          replica.seq,
          REPLICA_BATCH,
        ]);
        if (rows.length === 0 || this.closed) return;
        const changes: DocumentChange[] = rows.map((row) => ({
          docId: row.doc_id,
          document: row.deleted ? null : { docId: row.doc_id, title: row.title, text: row.text, metadata: row.metadata },
        }));
        replica.corpus.applyChanges(changes);
        replica.seq = rows.at(-1)!.seq;
        if (rows.length < REPLICA_BATCH) return;
      }
    })().finally(() => {
      this.replicaSync = undefined;
    });
    return this.replicaSync;
  }

  async ping(): Promise<number> {
    const started = performance.now();
    await this.query('SELECT 1');
    return performance.now() - started;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.replicaTimer);
    while (this.debitsInFlight.size > 0 || this.pendingDebits.length > 0) {
      this.scheduleDebits();
      await Promise.all(this.debitsInFlight);
      await new Promise((resolve) => setImmediate(resolve));
    }
    clearTimeout(this.outcomeTimer);
    await this.flushOutcomes();
    await this.replicaSync?.catch(() => undefined);
    await this.pool.end();
    if (this.replica) {
      this.replica.corpus.close();
      rmSync(this.replica.dir, { recursive: true, force: true });
    }
  }
}
