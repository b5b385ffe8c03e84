import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL server the suite may use, from TEST_DATABASE_URL; undefined skips the PostgreSQL tests. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

export const SKIP_POSTGRES = TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set: PostgreSQL tests skipped';

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database on the test server; drop() removes it, forcing out any connection left. */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `metered_search_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Ends every connection to the database, as a PostgreSQL restart would. */
export async function terminateConnections(name: string): Promise<number> {
  return admin(async (client) => {
    const { rowCount } = await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
      name,
    ]);
    return rowCount ?? 0;
  });
}

/** Refuses new connections to the database and ends those open, until `restore()`: PostgreSQL away. */
export async function refuseConnections(name: string): Promise<{ restore: () => Promise<void> }> {
  await admin((client) => client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`));
  await terminateConnections(name);
  return { restore: () => admin((client) => client.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)).then(() => undefined) };
}

export const PG_TEST_OPTIONS = { poolMax: 10, connectTimeoutMs: 2000, statementTimeoutMs: 5000, replicaPollMs: 50 };
