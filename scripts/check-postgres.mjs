// CI guard: the PostgreSQL suites must run in CI, so an unreachable TEST_DATABASE_URL fails the run.
import pg from 'pg';

const url = process.env.TEST_DATABASE_URL;
if (!url) {
  console.error('TEST_DATABASE_URL is not set');
  process.exit(1);
}
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
try {
  await client.connect();
  const { rows } = await client.query('SELECT version()');
  console.log(`PostgreSQL reachable: ${rows[0].version}`);
} catch (error) {
  console.error(`cannot connect to TEST_DATABASE_URL (${url}): ${error.message}`);
  process.exit(1);
} finally {
  await client.end().catch(() => undefined);
}
