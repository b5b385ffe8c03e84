import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { loadConfig, searchThreadsOf } from '../src/config.js';
import { createTestApp, json } from './support/helper.js';

describe('configuration from the environment', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dataDir, './data');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.faceServiceUrl, undefined);
    assert.equal(config.faceServiceTimeoutMs, 5000);
    assert.equal(config.faceBreakerFailures, 5);
    assert.equal(config.faceBreakerCooldownMs, 10_000);
    assert.equal(config.bodyLimitBytes, 16 * 1024 * 1024);
    assert.equal(config.imageMaxBytes, 10 * 1024 * 1024);
    assert.deepEqual([config.requestTimeoutMs, config.headersTimeoutMs, config.keepAliveTimeoutMs], [30_000, 10_000, 5000]);
    assert.match(config.serviceVersion, /^\d+\.\d+\.\d+/);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '127.0.0.1',
      DATA_DIR: '/tmp/x',
      FACE_SERVICE_URL: 'http://127.0.0.1:1/search',
      FACE_SERVICE_TIMEOUT_MS: '100',
      FACE_BREAKER_FAILURES: '2',
      FACE_BREAKER_COOLDOWN_MS: '50',
      SERVICE_VERSION: '1.3.0',
      BODY_LIMIT_BYTES: '1000',
      IMAGE_MAX_BYTES: '500',
      LOG_LEVEL: 'debug',
      SEED_DEMO: 'false',
    });
    assert.deepEqual(
      [config.port, config.host, config.dataDir, config.faceServiceUrl, config.faceServiceTimeoutMs, config.faceBreakerFailures],
      [9000, '127.0.0.1', '/tmp/x', 'http://127.0.0.1:1/search', 100, 2],
    );
    assert.deepEqual(
      [config.faceBreakerCooldownMs, config.serviceVersion, config.bodyLimitBytes, config.imageMaxBytes, config.logLevel, config.seedDemo],
      [50, '1.3.0', 1000, 500, 'debug', false],
    );
  });

  it('refuses invalid values with a message naming the variable', () => {
    assert.throws(() => loadConfig({ PORT: 'eighty' }), /PORT/);
    assert.throws(() => loadConfig({ FACE_SERVICE_TIMEOUT_MS: '0' }), /FACE_SERVICE_TIMEOUT_MS/);
    assert.throws(() => loadConfig({ BODY_LIMIT_BYTES: '-5' }), /BODY_LIMIT_BYTES/);
    assert.throws(() => loadConfig({ SERVICE_VERSION: 'v1' }), /SERVICE_VERSION/);
    assert.throws(() => loadConfig({ FACE_SERVICE_URL: 'ftp://x' }), /FACE_SERVICE_URL/);
    assert.throws(() => loadConfig({ SEED_DEMO: 'maybe' }), /SEED_DEMO/);
    assert.throws(() => loadConfig({ SEARCH_THREADS: '0' }), /SEARCH_THREADS must be an integer >= 1/);
    assert.throws(() => loadConfig({ SEARCH_LANGUAGE: 'german' }), /SEARCH_LANGUAGE must be one of da, de, en, .*got "german"/);
    assert.equal(loadConfig({}).searchLanguage, 'en');
    assert.equal(loadConfig({ SEARCH_LANGUAGE: 'de' }).searchLanguage, 'de');
    assert.throws(() => loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' }), /HEADERS_TIMEOUT_MS/);
  });

  it('reads the billing variables, refusing what cannot be right', () => {
    assert.deepEqual([loadConfig({}).purchaseUrl, loadConfig({}).stripe], [undefined, undefined]);
    const config = loadConfig({
      CREDITS_PURCHASE_URL: 'https://shop.example/buy',
      STRIPE_WEBHOOK_SECRET: 'whsec_abc',
      STRIPE_PRICE_CREDITS: '{"price_1": 100, "price_2": 5000}',
    });
    assert.equal(config.purchaseUrl, 'https://shop.example/buy');
    assert.deepEqual(config.stripe, { webhookSecret: 'whsec_abc', priceCredits: { price_1: 100, price_2: 5000 } });
    assert.throws(() => loadConfig({ CREDITS_PURCHASE_URL: 'shop.example' }), /CREDITS_PURCHASE_URL must be an http/);
    assert.throws(
      () => loadConfig({ STRIPE_WEBHOOK_SECRET: 'whsec_abc', STRIPE_PRICE_CREDITS: '[1]' }),
      /STRIPE_PRICE_CREDITS must be a JSON object/,
    );
    assert.throws(
      () => loadConfig({ STRIPE_WEBHOOK_SECRET: 'whsec_abc', STRIPE_PRICE_CREDITS: '{"price_1": 1.5}' }),
      /STRIPE_PRICE_CREDITS: "price_1" must be an integer/,
    );
    assert.throws(() => loadConfig({ STRIPE_PRICE_CREDITS: '{"price_1": 1}' }), /needs STRIPE_WEBHOOK_SECRET/);
  });

  it('reads prices, the low-balance mark and the webhook endpoint', () => {
    const defaults = loadConfig({});
    assert.deepEqual(
      [defaults.prices, defaults.lowBalanceThreshold, defaults.webhook],
      [{ '/document': 1, '/query': 1, '/face/search': 1 }, null, undefined],
    );
    const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    const config = loadConfig({ PRICES: '{"/query": 3}', LOW_BALANCE_THRESHOLD: '50', WEBHOOK_URL: 'http://10.0.0.5/hooks', WEBHOOK_SECRET: secret });
    assert.deepEqual(config.prices, { '/document': 1, '/query': 3, '/face/search': 1 });
    assert.equal(config.lowBalanceThreshold, 50);
    assert.deepEqual(config.webhook, { url: 'http://10.0.0.5/hooks', secret });
    assert.throws(() => loadConfig({ PRICES: '{"/credits": 2}' }), /PRICES: \/credits is not a billable endpoint/);
    assert.deepEqual(loadConfig({ PRICES: '{"/query:semantic": 2}' }).prices, {
      '/document': 1,
      '/query': 1,
      '/face/search': 1,
      '/query:semantic': 2,
    });
    assert.throws(() => loadConfig({ PRICES: '{"/query:neural": 2}' }), /\/query:neural is not a billable endpoint or mode/);
    assert.throws(() => loadConfig({ PRICES: '{"/query": 0}' }), /PRICES: "\/query" must be an integer from 1/);
    assert.throws(() => loadConfig({ LOW_BALANCE_THRESHOLD: '-1' }), /LOW_BALANCE_THRESHOLD/);
    assert.throws(() => loadConfig({ WEBHOOK_URL: 'http://10.0.0.5/hooks' }), /WEBHOOK_URL needs WEBHOOK_SECRET/);
    assert.throws(() => loadConfig({ WEBHOOK_URL: 'http://10.0.0.5/hooks', WEBHOOK_SECRET: 'plain' }), /whsec_/);
    assert.throws(() => loadConfig({ WEBHOOK_SECRET: secret }), /WEBHOOK_SECRET needs WEBHOOK_URL/);
  });

  it('reads the embedding model: all three of URL, model and dimensions, or none', () => {
    assert.equal(loadConfig({}).embeddings, undefined);
    const config = loadConfig({
      EMBEDDINGS_URL: 'http://127.0.0.1:11434/v1/embeddings',
      EMBEDDINGS_MODEL: 'nomic-embed-text',
      EMBEDDINGS_DIMENSIONS: '768',
      EMBEDDINGS_API_KEY: 'sk-local',
      EMBEDDINGS_RETRIES: '0',
      EMBEDDINGS_CONCURRENCY: '4',
    });
    assert.deepEqual(config.embeddings, {
      url: 'http://127.0.0.1:11434/v1/embeddings',
      model: 'nomic-embed-text',
      apiKey: 'sk-local',
      dimensions: 768,
      maxChars: 2000,
      batchSize: 64,
      timeoutMs: 10_000,
      retries: 0,
      concurrency: 4,
      breakerFailures: 5,
      breakerCooldownMs: 10_000,
    });
    const url = 'http://127.0.0.1:11434/v1/embeddings';
    assert.throws(() => loadConfig({ EMBEDDINGS_URL: url, EMBEDDINGS_DIMENSIONS: '768' }), /EMBEDDINGS_URL needs EMBEDDINGS_MODEL/);
    assert.throws(() => loadConfig({ EMBEDDINGS_URL: url, EMBEDDINGS_MODEL: 'm' }), /EMBEDDINGS_URL needs EMBEDDINGS_DIMENSIONS/);
    assert.throws(
      () => loadConfig({ EMBEDDINGS_URL: url, EMBEDDINGS_MODEL: 'm', EMBEDDINGS_DIMENSIONS: '0' }),
      /EMBEDDINGS_DIMENSIONS must be an integer >= 1/,
    );
    assert.throws(
      () => loadConfig({ EMBEDDINGS_URL: 'ollama:11434', EMBEDDINGS_MODEL: 'm', EMBEDDINGS_DIMENSIONS: '8' }),
      /EMBEDDINGS_URL must be an http/,
    );
    assert.throws(() => loadConfig({ EMBEDDINGS_MODEL: 'm' }), /need EMBEDDINGS_URL/);
  });

  it('reads a model run in process: EMBEDDINGS_MODEL_DIR, its threads (a core each by default), and its name', () => {
    assert.deepEqual(loadConfig({ EMBEDDINGS_MODEL_DIR: 'models/all-MiniLM-L6-v2' }).embeddings, {
      modelDir: 'models/all-MiniLM-L6-v2',
      model: undefined,
      threads: availableParallelism(),
      maxChars: 2000,
      batchSize: 32,
      concurrency: 16,
      breakerFailures: 5,
      breakerCooldownMs: 10_000,
    });
    const named = loadConfig({ EMBEDDINGS_MODEL_DIR: 'm', EMBEDDINGS_MODEL: 'minilm', EMBEDDINGS_THREADS: '1' }).embeddings;
    assert.deepEqual([named?.model, named && 'threads' in named && named.threads], ['minilm', 1]);
    assert.throws(
      () => loadConfig({ EMBEDDINGS_MODEL_DIR: 'm', EMBEDDINGS_URL: 'http://127.0.0.1:1/v1/embeddings' }),
      /name two models: set one of them/,
    );
    assert.throws(() => loadConfig({ EMBEDDINGS_MODEL_DIR: 'm', EMBEDDINGS_DIMENSIONS: '384' }), /config\.json's hidden_size/);
    assert.throws(() => loadConfig({ EMBEDDINGS_MODEL_DIR: 'm', EMBEDDINGS_THREADS: '0' }), /EMBEDDINGS_THREADS must be an integer >= 1/);
  });

  it('splits search over a thread per core, up to 4, in one process, and one per process with several, unless SEARCH_THREADS says', () => {
    assert.equal(searchThreadsOf(loadConfig({})), Math.min(4, availableParallelism()));
    assert.equal(searchThreadsOf(loadConfig({ WORKERS: '2' })), 1);
    assert.equal(searchThreadsOf({ ...loadConfig({}), workers: 3 }), 1, 'serve --workers 3');
    assert.equal(searchThreadsOf(loadConfig({ SEARCH_THREADS: '3' })), 3);
    assert.equal(searchThreadsOf(loadConfig({ SEARCH_THREADS: '2', WORKERS: '2' })), 2);
    assert.equal(searchThreadsOf(loadConfig({ SEARCH_THREADS: '1' })), 1);
  });

  it('SERVICE_VERSION is what /version reports', async () => {
    const context = await createTestApp({ settings: { serviceVersion: loadConfig({ SERVICE_VERSION: '2.4.1' }).serviceVersion } });
    try {
      assert.deepEqual(json(await context.app.inject({ url: '/version' })), { status: 200, version: '2.4.1' });
    } finally {
      await context.close();
    }
  });
});
