import pg from 'pg';
import { StoreUnavailableError } from './store-faults.js';

export interface PostgresConnection {
  url: string;
  poolMax: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
}

const UNAVAILABLE_MESSAGES = /Connection terminated|timeout exceeded|connection error|ECONNREFUSED|Connection refused/i;

/** Connection trouble, server shutdown, resource exhaustion and timeouts: worth a retry later. */
function isUnavailable(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  if (typeof code === 'string' && (/^(08|53|57)/.test(code) || /^E[A-Z]+$/.test(code))) return true;
  return UNAVAILABLE_MESSAGES.test(message ?? '');
}

function asStoreFault(error: unknown): unknown {
  return isUnavailable(error) ? new StoreUnavailableError({ cause: error }) : error;
}

/** bigint (int8) columns as numbers: balances and ids stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** A pool, a client in a transaction, or the database itself: what a statement needs to run. */
export interface Queryable {
  query<Row extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<Row>>;
}

/**
 * The connection pool every PostgreSQL store shares, with queries and transactions whose
 * connection faults come out as StoreUnavailableError.
 */
export class PostgresDatabase {
  readonly pool: pg.Pool;

  constructor(connection: PostgresConnection) {
    this.pool = new pg.Pool({
      connectionString: connection.url,
      max: connection.poolMax,
      connectionTimeoutMillis: connection.connectTimeoutMs,
      statement_timeout: connection.statementTimeoutMs,
      query_timeout: connection.statementTimeoutMs + 1000,
      types,
    });
    // A client losing its server (idle, in use, or already released after a failed query) must not
    // crash the process: the query in flight fails on its own, and the next one reconnects.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  /** A named query is prepared once per connection: the hot statements skip parsing and planning. */
  async query<Row extends pg.QueryResultRow>(sql: string, params: unknown[] = [], name?: string): Promise<pg.QueryResult<Row>> {
    try {
      return await this.pool.query<Row>(name ? { name, text: sql, values: params } : { text: sql, values: params });
    } catch (error) {
      throw asStoreFault(error);
    }
  }

  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw asStoreFault(error);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw asStoreFault(error);
    } finally {
      client.release(broken);
    }
  }

  /** The first row of a query that always returns one. */
  async one<Row extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<Row> {
    return (await this.query<Row>(sql, params)).rows[0] as Row;
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}
