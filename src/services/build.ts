import { AdminTokens } from '../admin/admin-tokens.js';
import { CreditService } from '../billing/credit-service.js';
import { StripeCheckout } from '../billing/stripe-checkout.js';
import type { Config } from '../config.js';
import { embedderOf } from '../embeddings/embedders.js';
import { QueryEmbeddings } from '../embeddings/query-embeddings.js';
import { EmbeddedFaceSearch } from '../faces/embedded.js';
import { FaceEnginePool } from '../faces/engine/pool.js';
import { FaceClient } from '../faces/face-client.js';
import type { FaceSearchBackend } from '../faces/face-search.js';
import type { FaceGalleryStore } from '../faces/gallery.js';
import { ProbeImageFetcher } from '../faces/probe-fetch.js';
import { IdempotencyService } from '../idempotency/idempotency-service.js';
import { type MetricSources, Metrics } from '../metrics/metrics.js';
import { MemoryBuckets } from '../rate-limit/memory-buckets.js';
import { RateLimitService } from '../rate-limit/rate-limit.js';
import { RedisBuckets } from '../rate-limit/redis-buckets.js';
import { languageNamed } from '../search/analyzer.js';
import { SearchService } from '../search/search-service.js';
import type { Store } from '../store/store.js';
import { SynonymService } from '../synonyms/synonym-service.js';
import type { AppSettings, Services } from './services.js';

/** Any claim outlives the request that holds it: past this, its holder is presumed dead. */
const CLAIM_MARGIN_MS = 5000;

export function buildServices(store: Store, config: Config, log: (message: string, error: unknown) => void): Services {
  const buckets = config.redisUrl ? new RedisBuckets(config.redisUrl) : new MemoryBuckets();
  const face = faceBackend(store, config);
  const synonyms = new SynonymService(store.synonyms, log);
  return {
    store,
    adminTokens: new AdminTokens(store.admin),
    metrics: config.metricsEnabled ? new Metrics(metricSources(store, face)) : undefined,
    credits: new CreditService(store.ledger, Date.now),
    clock: Date.now,
    idempotency: new IdempotencyService(store.idempotency, {
      ttlMs: config.idempotencyTtlSeconds * 1000,
      lockMs: config.requestTimeoutMs + CLAIM_MARGIN_MS,
    }),
    rateLimits: new RateLimitService(buckets, { defaultPerSecond: config.rateLimitPerSecond }, (error) =>
      log('rate-limit buckets unreachable: requests pass unlimited until they return', error),
    ),
    search: new SearchService(store.index, store.documents, queryEmbeddingsOf(config), synonyms, languageNamed(config.searchLanguage)),
    synonyms,
    probeImages: new ProbeImageFetcher({ maxBytes: config.imageMaxBytes, timeoutMs: config.probeFetchTimeoutMs }),
    face,
    checkout: checkoutOf(config),
  };
}

/** A caller waits while a prompt is embedded: at most one retry, however many an ingest may make. */
const QUERY_EMBEDDING_RETRIES = 1;

function queryEmbeddingsOf(config: Config): QueryEmbeddings | undefined {
  const embeddings = config.embeddings;
  return embeddings && new QueryEmbeddings(embedderOf(embeddings, QUERY_EMBEDDING_RETRIES), embeddings);
}

function checkoutOf(config: Config): StripeCheckout | undefined {
  const checkout = config.portal.checkout;
  return checkout && new StripeCheckout(checkout.secretKey, checkout.packs, checkout.apiBase);
}

/** What /metrics reads at each scrape: the corpus's size, the PostgreSQL pool, the face engine's queue. */
export function metricSources(store: Store, face: FaceSearchBackend | undefined): MetricSources {
  return {
    documents: () => store.documents.countDocuments(),
    pool: store.connections?.bind(store),
    faceJobs: face?.pending === undefined ? undefined : () => face.pending ?? 0,
  };
}

/** The proxy when FACE_SERVICE_URL names a face service; otherwise the embedded engine, unless FACE_WORKERS=0. */
function faceBackend(store: Store, config: Config): FaceSearchBackend | undefined {
  if (config.faceServiceUrl) {
    return new FaceClient({
      url: config.faceServiceUrl,
      timeoutMs: config.faceServiceTimeoutMs,
      breakerFailures: config.faceBreakerFailures,
      breakerCooldownMs: config.faceBreakerCooldownMs,
    });
  }
  return config.faceWorkers > 0 ? embeddedFaceSearch(config, store.faces, config.faceWorkers) : undefined;
}

/** The embedded engine on `workers` threads, with the job time limit and queue bound of the config. */
export function embeddedFaceSearch(config: Config, gallery: FaceGalleryStore, workers: number): EmbeddedFaceSearch {
  const engine = new FaceEnginePool(workers, { jobTimeoutMs: config.faceJobTimeoutMs });
  return new EmbeddedFaceSearch(engine, gallery, config.faceQueueMax);
}

export function appSettings(config: Config): AppSettings {
  return {
    serviceVersion: config.serviceVersion,
    bodyLimitBytes: config.bodyLimitBytes,
    metricsPublic: config.metricsPublic,
    imageMaxBytes: config.imageMaxBytes,
    // With the portal selling credits, a 402 sends the caller to its buy page.
    purchaseUrl: config.portal.checkout && config.portal.publicUrl ? `${config.portal.publicUrl}/portal#buy` : config.purchaseUrl,
    portal: config.portal,
    prices: config.prices,
    stripe: config.stripe,
    webhookAllowLinkLocal: config.webhookAllowLinkLocal,
    trustProxy: config.trustProxy,
    timeouts: { requestMs: config.requestTimeoutMs, headersMs: config.headersTimeoutMs, keepAliveMs: config.keepAliveTimeoutMs },
  };
}
