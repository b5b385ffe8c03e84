import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import { openApiDocument, renderClientTypes } from '../../scripts/client-types.js';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { MeteredSearchClient, MeteredSearchError, MeteredSearchNetworkError } from '../../src/client/index.js';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { documentsOf, SAMPLE_DOCUMENTS, tempDir } from '../support/helper.js';

const ENVELOPE_503 = JSON.stringify({ status: 503, message: 'injected' });
const FAST_RETRY = { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 2000 };

describe('the typed client (metered-search/client)', () => {
  const dir = tempDir();
  let server: RunningServer;
  let proxy: FaultProxy;
  let admin: KeyAdmin;
  let seedStore: SqliteStore;
  let apiKey: string;

  before(async () => {
    seedStore = new SqliteStore(dir.path);
    await seedStore.documents.ingestDocuments(documentsOf(SAMPLE_DOCUMENTS));
    admin = new KeyAdmin(seedStore.ledger, null, Date.now, true);
    server = await startServer(
      loadConfig({
        DATA_DIR: dir.path,
        PORT: '0',
        HOST: '127.0.0.1',
        SEED_DEMO: 'false',
        LOG_LEVEL: 'silent',
        RATE_LIMIT_PER_S: '0',
        FACE_WORKERS: '0',
      }),
    );
    proxy = await new FaultProxy(server.url).start();
  });
  after(async () => {
    await proxy.stop();
    await server.close();
    await seedStore.close();
    dir.remove();
  });
  beforeEach(async () => {
    apiKey = (await admin.create(10)).key;
    proxy.faults.length = 0;
    proxy.seen.length = 0;
  });

  const client = (options: Partial<ConstructorParameters<typeof MeteredSearchClient>[0]> = {}) =>
    new MeteredSearchClient({ baseUrl: proxy.url, apiKey, retry: FAST_RETRY, ...options });
  const balance = async () => (await admin.find(apiKey))!.balance;

  describe('happy', () => {
    it('calls every endpoint and returns typed bodies with what the headers said', async () => {
      const api = client();
      assert.equal((await api.root()).status, 200);
      assert.match((await api.version()).version, /^\d+\.\d+\.\d+/);
      assert.equal(typeof (await api.profile()).user.name, 'string');
      assert.equal(typeof (await api.nettest()).ok, 'boolean');
      assert.equal((await api.credits()).current_balance, 10);
      const document = await api.document('gdpr-33');
      assert.equal(document.body.doc_id, 'gdpr-33');
      assert.equal(document.meta.creditsRemaining, 9);
      const results = await api.query({ query: 'personal data breach', top_k: 2 });
      assert.equal(results.resp.body.hits.documents[0].doc_id, 'gdpr-33');
      assert.equal(results.meta.creditsRemaining, 8);
      assert.equal(results.meta.replayed, false);
      assert.equal(JSON.stringify(results).includes('meta'), false, 'the body is what the service sent');
    });

    it('retries a call whose response was lost after the server charged: it succeeds and costs exactly one credit', async () => {
      proxy.faults.push({ kind: 'drop-response' }, { kind: 'drop-response' });
      const results = await client().query({ query: 'personal data breach' });
      assert.equal(results.status, 200);
      assert.equal(results.meta.attempts, 3);
      assert.equal(results.meta.replayed, true);
      assert.equal(results.meta.creditsRemaining, 9);
      assert.equal(await balance(), 9, 'three attempts reached the server, one credit was spent');
      const keys = new Set(proxy.seen.map((seen) => seen.idempotencyKey));
      assert.equal(keys.size, 1, 'every attempt carried the same Idempotency-Key');
      assert.ok([...keys][0]);
    });

    it('uses a fresh Idempotency-Key per call, or the one given', async () => {
      const api = client();
      await api.document('gdpr-33');
      await api.document('gdpr-33');
      await api.document('gdpr-33', { idempotencyKey: 'order-77' });
      await api.document('gdpr-33', { idempotencyKey: 'order-77' });
      const keys = proxy.seen.map((seen) => seen.idempotencyKey);
      assert.notEqual(keys[0], keys[1]);
      assert.deepEqual(keys.slice(2), ['order-77', 'order-77']);
      assert.equal(await balance(), 7, 'two calls plus one idempotent call');
    });

    it('retries 5xx and 429, honouring Retry-After', async () => {
      proxy.faults.push({ kind: 'answer', status: 503, body: ENVELOPE_503 });
      assert.equal((await client().credits()).current_balance, 10);
      proxy.faults.push({
        kind: 'answer',
        status: 429,
        headers: { 'retry-after': '1' },
        body: JSON.stringify({ status: 429, message: 'slow down' }),
      });
      const started = performance.now();
      const document = await client().document('gdpr-33');
      assert.ok(performance.now() - started >= 950, 'waited the second Retry-After asked for');
      assert.equal(document.meta.attempts, 2);
      assert.equal(await balance(), 9);
    });

    it("throws a spend cap's 429 at once, with when it resets: a Retry-After of hours is not waited for", async () => {
      const attempts = proxy.seen.length;
      proxy.faults.push({
        kind: 'answer',
        status: 429,
        headers: { 'retry-after': '7200', 'x-credits-remaining': '9' },
        body: JSON.stringify({ status: 429, message: 'This API key has spent 5 of its cap of 5 credits a day' }),
      });
      const started = Date.now();
      const error = await client()
        .query({ query: 'breach' })
        .catch((caught: unknown) => caught);
      assert.ok(error instanceof MeteredSearchError);
      assert.equal(error.status, 429);
      assert.equal(error.attempts, 1);
      assert.equal(proxy.seen.length, attempts + 1, 'asked once');
      const resets = error.retryAt?.getTime() ?? 0;
      assert.ok(resets >= started + 7_199_000 && resets <= Date.now() + 7_200_000, String(error.retryAt));
    });

    it("reads the calling key's own usage", async () => {
      await client().document('gdpr-33');
      const usage = await client().usage();
      assert.equal(usage.status, 200);
      assert.ok(
        usage.days.some((day) => day.endpoint === '/document' && day.count >= 1),
        JSON.stringify(usage.days),
      );
    });

    it('retries network failures and per-attempt timeouts', async () => {
      proxy.faults.push({ kind: 'cut' }, { kind: 'hang' });
      const results = await client({ timeoutMs: 300 }).query({ query: 'breach' });
      assert.equal(results.meta.attempts, 3);
      assert.equal(await balance(), 9);
    });
  });

  describe('errors', () => {
    it('throws a typed error with status, message and request id, without retrying a 4xx', async () => {
      const unknown = new MeteredSearchClient({ baseUrl: proxy.url, apiKey: 'e'.repeat(64), retry: FAST_RETRY });
      const error = await unknown.query({ query: 'x' }).catch((caught: unknown) => caught);
      assert.ok(error instanceof MeteredSearchError);
      assert.equal(error.status, 401);
      assert.match(error.message, /not recognised/);
      assert.equal(error.attempts, 1);
      assert.ok(error.requestId);
      assert.equal(proxy.seen.length, 1);

      const broke = (await admin.create(0)).key;
      const noCredits = await new MeteredSearchClient({ baseUrl: proxy.url, apiKey: broke }).document('gdpr-33').catch((caught: unknown) => caught);
      assert.equal((noCredits as MeteredSearchError).status, 402);
    });

    it('gives up after maxAttempts with the last answer, or a network error', async () => {
      proxy.faults.push(...Array.from({ length: 4 }, () => ({ kind: 'answer' as const, status: 503, body: ENVELOPE_503 })));
      const error = await client()
        .document('gdpr-33')
        .catch((caught: unknown) => caught);
      assert.ok(error instanceof MeteredSearchError);
      assert.equal(error.status, 503);
      assert.equal(error.attempts, 4);

      proxy.faults.push(...Array.from({ length: 4 }, () => ({ kind: 'cut' as const })));
      const network = await client()
        .document('gdpr-33')
        .catch((caught: unknown) => caught);
      assert.ok(network instanceof MeteredSearchNetworkError);
      assert.equal(network.attempts, 4);
      assert.equal(await balance(), 10, 'nothing reached the service, nothing was charged');
    });

    it('stops at once when the caller aborts, even between attempts', async () => {
      proxy.faults.push(...Array.from({ length: 4 }, () => ({ kind: 'answer' as const, status: 503, body: ENVELOPE_503 })));
      const controller = new AbortController();
      const slow = new MeteredSearchClient({ baseUrl: proxy.url, apiKey, retry: { maxAttempts: 4, baseDelayMs: 5000, maxDelayMs: 5000 } });
      const started = performance.now();
      setTimeout(() => controller.abort(new Error('caller gave up')), 100);
      await assert.rejects(slow.credits({ signal: controller.signal }), /caller gave up/);
      assert.ok(performance.now() - started < 2000);
    });
  });

  describe('drift', () => {
    it("has types generated from the service's current OpenAPI document (run npm run generate:client)", async () => {
      const committed = readFileSync(new URL('../../src/client/api-types.ts', import.meta.url), 'utf8');
      assert.equal(committed, renderClientTypes(await openApiDocument()));
    });

    it('is importable as metered-search/client from the built package', async () => {
      const resolved = import.meta.resolve('metered-search/client');
      assert.match(resolved, /\/dist\/client\/index\.js$/);
      const exported = (await import(resolved)) as Record<string, unknown>;
      assert.equal(typeof exported.MeteredSearchClient, 'function');
      assert.equal(typeof exported.MeteredSearchError, 'function');
    });
  });
});
