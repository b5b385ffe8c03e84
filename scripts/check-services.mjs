// CI guard: the PostgreSQL and Redis suites must run in CI, so an unreachable TEST_DATABASE_URL or
// TEST_REDIS_URL fails the run instead of letting those suites skip.
import { Redis } from 'ioredis';
import pg from 'pg';

const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
if (!databaseUrl || !redisUrl) {
  console.error('TEST_DATABASE_URL and TEST_REDIS_URL must both be set');
  process.exit(1);
}

const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
try {
  await client.connect();
  const { rows } = await client.query('SELECT version()');
  console.log(`PostgreSQL reachable: ${rows[0].version}`);
} catch (error) {
  console.error(`cannot connect to TEST_DATABASE_URL (${databaseUrl}): ${error.message}`);
  process.exit(1);
} finally {
  await client.end().catch(() => undefined);
}

const redis = new Redis(redisUrl, { connectTimeout: 5000, maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
redis.on('error', () => undefined);
try {
  await redis.connect();
  const info = await redis.info('server');
  console.log(`Redis reachable: ${/redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown version'}`);
} catch (error) {
  console.error(`cannot connect to TEST_REDIS_URL (${redisUrl}): ${error.message}`);
  process.exit(1);
} finally {
  redis.disconnect();
}
