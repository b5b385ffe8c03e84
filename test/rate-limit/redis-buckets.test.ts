import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import type { KeyRecord } from '../../src/billing/ledger.js';
import { RateLimitService } from '../../src/rate-limit/rate-limit.js';
import { RedisBuckets } from '../../src/rate-limit/redis-buckets.js';
import { assertEnvelope, createTestApp } from '../support/helper.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const key = (rateLimit: number): KeyRecord => ({
  id: `key_${randomUUID()}`,
  accountId: `acct_${randomUUID()}`,
  name: '',
  status: 'active',
  balance: 1,
  createdAt: '',
  rateLimit,
  expiringGrants: 0,
  prices: null,
  lowBalanceThreshold: null,
  expiresAt: null,
  metadata: null,
  spendCaps: null,
  accountSpendCaps: null,
});

describe('rate-limit buckets in Redis', { skip: REDIS_URL ? false : 'TEST_REDIS_URL is not set' }, () => {
  const opened: RedisBuckets[] = [];
  const buckets = () => {
    const created = new RedisBuckets(REDIS_URL!, `metered-search-test:${process.pid}:`);
    opened.push(created);
    return created;
  };
  after(async () => Promise.all(opened.map((bucket) => bucket.close())));

  it('holds one limit across instances: 3 instances, 60 concurrent requests, 5 per second, exactly 5 pass', async () => {
    const instances = [buckets(), buckets(), buckets()].map((shared) => new RateLimitService(shared, { defaultPerSecond: 100 }));
    const caller = key(5);
    const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => instances[i % 3].take(caller.id, caller)));
    assert.equal(decisions.filter((decision) => decision.limited && decision.allowed).length, 5);
    const refused = decisions.find((decision) => decision.limited && !decision.allowed) as { retryAfterSeconds: number; remaining: number };
    assert.equal(refused.retryAfterSeconds, 1);
    assert.equal(refused.remaining, 0);
  });

  it("refills by the time passed on Redis' clock", async () => {
    const limiter = new RateLimitService(buckets(), { defaultPerSecond: 100 });
    const caller = key(2);
    assert.ok((await limiter.take(caller.id, caller)).limited);
    await limiter.take(caller.id, caller);
    assert.equal(((await limiter.take(caller.id, caller)) as { allowed: boolean }).allowed, false);
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(((await limiter.take(caller.id, caller)) as { allowed: boolean }).allowed, true, 'half a second at 2/s is one request');
  });

  it('answers 429 over HTTP once the shared bucket is empty, uncharged', async () => {
    const context = await createTestApp({ rateLimitPerSecond: 2, buckets: buckets() });
    try {
      const apiKey = await context.createKey(10);
      const send = () => context.app.inject({ method: 'GET', url: '/document', headers: { 'x-api-key': apiKey, 'svc-doc-id': 'gdpr-33' } });
      assert.equal((await send()).statusCode, 200);
      const second = await send();
      assert.equal(second.headers.ratelimit, '"per-key";r=0;t=1');
      assertEnvelope(await send(), 429);
      assert.equal(await context.balanceOf(apiKey), 8);
    } finally {
      await context.close();
    }
  });

  it('lets requests through, unlimited, while Redis cannot be reached', async () => {
    const unreachable = new RedisBuckets('redis://127.0.0.1:1', 'unused:');
    opened.push(unreachable);
    const failures: unknown[] = [];
    const limiter = new RateLimitService(unreachable, { defaultPerSecond: 1 }, (error) => failures.push(error));
    const caller = key(1);
    for (let i = 0; i < 5; i++) assert.deepEqual(await limiter.take(caller.id, caller), { limited: false });
    assert.equal(failures.length, 1, 'the failure is reported once, not per request');
  });
});
