import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashApiKey } from '../../../src/billing/keys.js';
import { MemoryBuckets } from '../../../src/rate-limit/memory-buckets.js';
import { assertEnvelope, createTestApp, type TestContext } from '../../support/helper.js';

describe('per-key rate limits', () => {
  let context: TestContext;
  let now = 0;
  before(async () => {
    context = await createTestApp({ rateLimitPerSecond: 3, buckets: new MemoryBuckets(() => now) });
  });
  after(async () => context.close());

  const query = (key: string) =>
    context.app.inject({
      method: 'POST',
      url: '/query',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: '{"query":"data"}',
    });
  const credits = (key: string) => context.app.inject({ method: 'GET', url: '/credits', headers: { 'x-api-key': key } });

  describe('happy', () => {
    it('advertises the policy and what is left on every answer (IETF RateLimit-Policy and RateLimit)', async () => {
      const key = await context.createKey(100);
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await query(key);
        assert.equal(response.statusCode, 200);
        assert.equal(response.headers['ratelimit-policy'], '"per-key";q=3;w=1');
        remaining.push(String(response.headers.ratelimit));
      }
      assert.deepEqual(remaining, ['"per-key";r=2;t=1', '"per-key";r=1;t=1', '"per-key";r=0;t=1']);
    });

    it("refills at the key's rate", async () => {
      const key = await context.createKey(100);
      for (let i = 0; i < 3; i++) await query(key);
      assertEnvelope(await query(key), 429);
      now += 340;
      assert.equal((await query(key)).statusCode, 200, 'a third of a second brings back one request at 3/s');
      assertEnvelope(await query(key), 429);
      now += 1000;
      for (let i = 0; i < 3; i++) assert.equal((await query(key)).statusCode, 200);
    });

    it('gives a key its own rate over the default', async () => {
      const fast = await context.createKey(100);
      await context.store.ledger.setKeyRateLimit((await context.store.ledger.findKeyByHash(hashApiKey(fast)))!.id, 10);
      for (let i = 0; i < 10; i++) assert.equal((await query(fast)).statusCode, 200, `request ${i + 1} of 10`);
      const refused = await query(fast);
      assertEnvelope(refused, 429);
      assert.equal(refused.headers['ratelimit-policy'], '"per-key";q=10;w=1');
    });
  });

  describe('errors', () => {
    it('answers 429 with Retry-After and the envelope, and charges nothing', async () => {
      const key = await context.createKey(100);
      for (let i = 0; i < 3; i++) await query(key);
      const refused = await query(key);
      assertEnvelope(refused, 429, /Retry-After/);
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(refused.headers.ratelimit, '"per-key";r=0;t=1');
      assert.equal(refused.headers['x-credits-remaining'], undefined);
      assert.equal(await context.balanceOf(key), 97);
    });

    it('limits free keyed routes too (/credits)', async () => {
      const key = await context.createKey(100);
      for (let i = 0; i < 3; i++) assert.equal((await credits(key)).statusCode, 200);
      assertEnvelope(await credits(key), 429);
    });
  });

  describe('security', () => {
    it("keeps keys apart: one key's flood does not limit another", async () => {
      const flood = await context.createKey(100);
      const quiet = await context.createKey(100);
      for (let i = 0; i < 10; i++) await query(flood);
      assert.equal((await query(quiet)).statusCode, 200);
    });

    it('answers unknown and revoked keys as before (401, 403), with no bucket for them', async () => {
      assertEnvelope(await query('d'.repeat(64)), 401);
      const key = await context.createKey(100);
      await context.store.ledger.setKeyStatus((await context.store.ledger.findKeyByHash(hashApiKey(key)))!.id, 'revoked');
      const response = await query(key);
      assertEnvelope(response, 403);
      assert.equal(response.headers['ratelimit-policy'], undefined);
    });
  });
});

describe('rate limit off', () => {
  it('with RATE_LIMIT_PER_S=0 and no per-key rate, sends no RateLimit headers and never 429', async () => {
    const context = await createTestApp({ rateLimitPerSecond: 0 });
    try {
      const key = await context.createKey(100);
      for (let i = 0; i < 20; i++) {
        const response = await context.app.inject({ method: 'GET', url: '/credits', headers: { 'x-api-key': key } });
        assert.equal(response.statusCode, 200);
        assert.equal(response.headers['ratelimit-policy'], undefined);
      }
    } finally {
      await context.close();
    }
  });
});
