import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { buildApp } from '../../src/app.js';
import { CreditService } from '../../src/billing/credit-service.js';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import type { StripeCheckout } from '../../src/billing/stripe-checkout.js';
import type { DocumentRecord } from '../../src/documents/document-store.js';
import { DocumentEmbeddings } from '../../src/embeddings/document-embeddings.js';
import type { EmbeddingsConfig, EndpointEmbeddingsConfig } from '../../src/embeddings/embedder.js';
import { embedderOf } from '../../src/embeddings/embedders.js';
import { QueryEmbeddings } from '../../src/embeddings/query-embeddings.js';
import type { FaceSearchBackend } from '../../src/faces/face-search.js';
import { ProbeImageFetcher } from '../../src/faces/probe-fetch.js';
import { IdempotencyService, type IdempotencySettings } from '../../src/idempotency/idempotency-service.js';
import { Metrics } from '../../src/metrics/metrics.js';
import type { Clock } from '../../src/platform/clock.js';
import type { TokenBuckets } from '../../src/rate-limit/buckets.js';
import { MemoryBuckets } from '../../src/rate-limit/memory-buckets.js';
import { RateLimitService } from '../../src/rate-limit/rate-limit.js';
import type { DocumentIndex } from '../../src/search/document-index.js';
import type { Language } from '../../src/search/engine/languages.js';
import { SearchService } from '../../src/search/search-service.js';
import { metricSources } from '../../src/services/build.js';
import type { AppSettings, Services } from '../../src/services/services.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { SynonymService } from '../../src/synonyms/synonym-service.js';
import { createTestDatabase, PG_TEST_OPTIONS } from './pg.js';

export const DEFAULT_SETTINGS: AppSettings = {
  serviceVersion: '1.3.0',
  bodyLimitBytes: 16 * 1024 * 1024,
  metricsPublic: false,
  purchaseUrl: undefined,
  portal: { publicUrl: undefined, checkout: undefined },
  stripe: undefined,
  webhookAllowLinkLocal: false,
  trustProxy: false,
  prices: {},
  imageMaxBytes: 10 * 1024 * 1024,
  timeouts: { requestMs: 30_000, headersMs: 10_000, keepAliveMs: 5000 },
};

/**
 * Bytes that begin like a PNG file: the service judges an image's format by its first bytes, and
 * the stand-in downstreams of these tests never decode it.
 */
export function pngLikeImage(rest: string | Buffer = 'test image bytes'): Buffer {
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(rest)]);
}

export function tempDir(prefix = 'metered-search-test-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export async function* documentsOf(documents: DocumentRecord[]): AsyncGenerator<DocumentRecord> {
  yield* documents;
}

/** The words of syntheticDocuments. */
export const SYNTHETIC_WORDS = [
  'river',
  'stone',
  'harbour',
  'lantern',
  'orchard',
  'meadow',
  'copper',
  'falcon',
  'glacier',
  'thistle',
  'ember',
  'quarry',
];

/** Deterministic documents over a small vocabulary, so that statistics overlap a lot. */
export function syntheticDocuments(count: number, seed: number, prefix = 'doc'): DocumentRecord[] {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const words = (count: number) => Array.from({ length: count }, () => SYNTHETIC_WORDS[Math.floor(next() ** 2 * SYNTHETIC_WORDS.length)]).join(' ');
  return Array.from({ length: count }, (_, index) => ({
    docId: `${prefix}-${index}`,
    title: words(1 + Math.floor(next() * 4)),
    text: words(5 + Math.floor(next() * 40)),
    metadata: { shelf: ['a', 'b', 'c'][index % 3], year: 2000 + (index % 4) },
  }));
}

export const SAMPLE_DOCUMENTS: DocumentRecord[] = [
  {
    docId: 'gdpr-17',
    title: 'Right to erasure',
    text: 'Data subjects may require erasure of personal data held by a controller.',
    metadata: { jurisdiction: 'EU', category: 'privacy', year: 2016, binding: true, tags: ['gdpr', 'erasure'] },
  },
  {
    docId: 'gdpr-33',
    title: 'Notifying a personal data breach',
    text: 'A controller notifies the supervisory authority of a breach within 72 hours.',
    metadata: { jurisdiction: 'EU', category: 'privacy', year: 2016, binding: true, tags: ['gdpr', 'breach'] },
  },
  {
    docId: 'ccpa',
    title: 'California consumer privacy',
    text: 'Consumers may ask a business to delete personal information and to stop selling it.',
    metadata: { jurisdiction: 'US-CA', category: 'privacy', year: 2018, binding: true },
  },
  {
    docId: 'flsa',
    title: 'Overtime pay',
    text: 'Employees working over 40 hours in a week receive overtime at one and a half times the regular rate.',
    metadata: { jurisdiction: 'US', category: 'employment', year: 1938, binding: 'yes' },
  },
  {
    docId: 'guidance',
    title: 'Breach reporting guidance',
    text: 'Non-binding guidance on how to report breaches and what to include.',
    metadata: { jurisdiction: 'EU', category: 'privacy', year: '2016', binding: false, note: null },
  },
];

export interface TestContext {
  app: FastifyInstance;
  store: Store;
  services: Services;
  /** Creates a key with this balance and returns the plain key. */
  createKey(credits: number, name?: string): Promise<string>;
  balanceOf(key: string): Promise<number>;
  close(): Promise<void>;
}

export async function createTestApp(
  options: {
    face?: FaceSearchBackend;
    settings?: Partial<AppSettings>;
    store?: Store;
    documents?: DocumentRecord[];
    /** Default requests per second per key; 0 (no limit) unless a test is about limits. */
    rateLimitPerSecond?: number;
    buckets?: TokenBuckets;
    probeImages?: ProbeImageFetcher;
    idempotency?: Partial<IdempotencySettings>;
    /** false: no metrics are counted and GET /metrics is not served. */
    metrics?: boolean;
    /** The service's time (ms since the epoch): a test moves it to pass a grace period. */
    clock?: Clock;
    /** Credit packs the portal sells through Stripe Checkout. */
    checkout?: StripeCheckout;
    /** An embeddings endpoint (a stand-in on loopback): documents get vectors, and semantic and hybrid queries are served. */
    embeddings?: EmbeddingsConfig;
    /** Wraps the store's search index: a test holds its vector index back, as while it is built after a start. */
    index?: (stored: DocumentIndex) => DocumentIndex;
    /** SEARCH_LANGUAGE: what documents and queries without a language of their own are analysed in; absent: English. */
    language?: Language;
  } = {},
): Promise<TestContext> {
  const dir = tempDir();
  const database = !options.store && process.env.TEST_STORE === 'postgres' ? await createTestDatabase() : undefined;
  const embeddings = options.embeddings && new DocumentEmbeddings(embedderOf(options.embeddings), options.embeddings.maxChars);
  const store: Store =
    options.store ??
    (database
      ? await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS, embeddings, language: options.language })
      : new SqliteStore(dir.path, { embeddings, language: options.language }));
  await store.documents.ingestDocuments(documentsOf(options.documents ?? SAMPLE_DOCUMENTS));
  const rateLimits = new RateLimitService(options.buckets ?? new MemoryBuckets(), { defaultPerSecond: options.rateLimitPerSecond ?? 0 });
  const synonyms = new SynonymService(store.synonyms);
  const services: Services = {
    store,
    adminTokens: new AdminTokens(store.admin),
    metrics: options.metrics === false ? undefined : new Metrics(metricSources(store, options.face)),
    credits: new CreditService(store.ledger, options.clock),
    clock: options.clock ?? Date.now,
    idempotency: new IdempotencyService(store.idempotency, { ttlMs: 86_400_000, lockMs: 35_000, ...options.idempotency }),
    rateLimits,
    search: new SearchService(
      options.index ? options.index(store.index) : store.index,
      store.documents,
      options.embeddings && new QueryEmbeddings(embedderOf(options.embeddings), options.embeddings),
      synonyms,
      options.language,
    ),
    synonyms,
    probeImages:
      options.probeImages ?? new ProbeImageFetcher({ maxBytes: { ...DEFAULT_SETTINGS, ...options.settings }.imageMaxBytes, timeoutMs: 2000 }),
    face: options.face,
    checkout: options.checkout,
  };
  const app = await buildApp(services, { settings: { ...DEFAULT_SETTINGS, ...options.settings } });
  const admin = new KeyAdmin(store.ledger, null, Date.now, true);
  return {
    app,
    store,
    services,
    createKey: async (credits, name) => (await admin.create(credits, name)).key,
    balanceOf: async (key) => (await admin.find(key))!.balance,
    close: async () => {
      await app.close();
      await options.face?.close();
      await rateLimits.close();
      await services.probeImages.close();
      await store.close();
      await database?.drop();
      dir.remove();
    },
  };
}

export function json(response: LightMyRequestResponse): Record<string, any> {
  return response.json() as Record<string, any>;
}

/** Asserts the error envelope: {status, message} with status equal to the HTTP code. */
export function assertEnvelope(response: LightMyRequestResponse, status: number, messagePattern?: RegExp): Record<string, any> {
  const body = json(response);
  if (response.statusCode !== status) {
    throw new Error(`expected HTTP ${status}, got ${response.statusCode}: ${response.body}`);
  }
  if (body.status !== status) throw new Error(`envelope status ${body.status} != ${status}`);
  if (typeof body.message !== 'string' || body.message.length === 0) throw new Error(`envelope without message: ${response.body}`);
  if (messagePattern && !messagePattern.test(body.message)) {
    throw new Error(`message "${body.message}" does not match ${messagePattern}`);
  }
  if (!String(response.headers['content-type']).startsWith('application/json')) throw new Error('envelope is not JSON');
  return body;
}

/** Polls an assertion until it passes or `withinMs` pass (for writes the service defers, pages still loading). */
export async function eventually(assertion: () => Promise<void>, withinMs = 2000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** The service's embedder settings for a stand-in at `url`: small batches, short timeouts, one retry, so faults show fast. */
export function standInEmbeddings(url: string, dimensions: number, overrides: Partial<EndpointEmbeddingsConfig> = {}): EndpointEmbeddingsConfig {
  return {
    url,
    model: 'stand-in',
    apiKey: undefined,
    dimensions,
    maxChars: 2000,
    batchSize: 16,
    timeoutMs: 1000,
    retries: 1,
    concurrency: 16,
    breakerFailures: 5,
    breakerCooldownMs: 10_000,
    ...overrides,
  };
}
