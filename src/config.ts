import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  BILLABLE_ENDPOINTS,
  type BillableEndpoint,
  type CreditPack,
  isWebhookSecret,
  MAX_BALANCE,
  PRICE_NAMES,
  PRICED_MODES,
  type PricedMode,
  SEARCH_LANGUAGES,
} from './rules.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  pgPoolMax: number;
  pgConnectTimeoutMs: number;
  pgStatementTimeoutMs: number;
  replicaPollMs: number;
  workers: number;
  /**
   * Threads a large corpus's search index is split over (SqliteCorpus, ShardedIndex), so that
   * searches use that many cores; 1 searches on the event loop. Undefined: as many as the
   * machine's cores, at most 4, for one process; 1 per process with several (see searchThreadsOf).
   */
  searchThreads: number | undefined;
  /** SEARCH_LANGUAGE: what documents and queries without a `language` of their own are analysed in (ISO 639-1, or none). */
  searchLanguage: string;
  faceServiceUrl: string | undefined;
  faceServiceTimeoutMs: number;
  faceBreakerFailures: number;
  faceBreakerCooldownMs: number;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  serviceVersion: string;
  bodyLimitBytes: number;
  imageMaxBytes: number;
  logLevel: string;
  seedDemo: boolean;
  /** Whether the service counts requests, debits and the like for GET /metrics. */
  metricsEnabled: boolean;
  /** Whether GET /metrics answers without an admin token. */
  metricsPublic: boolean;
  /** Which proxies' X-Forwarded-* headers to believe (TRUST_PROXY, Fastify's trustProxy): the client's address and protocol. */
  trustProxy: TrustProxy;
  /** A listener of its own for the admin API and /metrics (ADMIN_PORT); undefined: they share PORT. */
  admin: { host: string; port: number } | undefined;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Requests per second per key unless the key has its own limit; 0: no default limit. */
  rateLimitPerSecond: number;
  /** With it, rate-limit buckets live in Redis and the limit holds across instances. */
  redisUrl: string | undefined;
  idempotencyTtlSeconds: number;
  /** Inference threads of the embedded face engine (used when FACE_SERVICE_URL is unset); 0: none. */
  faceWorkers: number;
  /** The whole fetch of a probe_image_url, redirects included. */
  probeFetchTimeoutMs: number;
  /** How long one image may hold an embedded face worker before the worker is stopped and replaced; 0: no limit. */
  faceJobTimeoutMs: number;
  /** Face searches that may wait for an embedded worker; more are answered 503 before the debit. */
  faceQueueMax: number;
  /** Where callers buy credits (CREDITS_PURCHASE_URL): named in every 402. */
  purchaseUrl: string | undefined;
  /** Credits per request of each billable endpoint (PRICES); 1 where it says nothing. /query's modes only when named. */
  prices: Record<BillableEndpoint, number> & Partial<Record<PricedMode, number>>;
  /** The balance at or below which a debit sends credits.low, for keys without their own (LOW_BALANCE_THRESHOLD); null: none. */
  lowBalanceThreshold: number | null;
  /** Webhook URLs may name link-local and cloud-metadata addresses (WEBHOOK_ALLOW_LINK_LOCAL); refused by default. */
  webhookAllowLinkLocal: boolean;
  /** An endpoint that receives every event (WEBHOOK_URL, WEBHOOK_SECRET), besides those set through the admin API. */
  webhook: { url: string; secret: string } | undefined;
  /** Stripe top-ups: STRIPE_WEBHOOK_SECRET, and STRIPE_PRICE_CREDITS ({"price_id": credits}). */
  stripe: { webhookSecret: string; priceCredits: Record<string, number> } | undefined;
  /** The customer portal (/portal): where callers reach the service (PUBLIC_URL), and what it sells. */
  portal: PortalConfig;
  /** The embedding model (EMBEDDINGS_*), for semantic and hybrid queries; undefined: every query is lexical. */
  embeddings: EmbeddingsConfig | undefined;
}

export interface PortalConfig {
  /** The service's public origin, for portal links and a 402's buy page; undefined: portal links use the request's own origin. */
  publicUrl: string | undefined;
  /** Credit packs sold through Stripe Checkout (CREDIT_PACKS, STRIPE_SECRET_KEY, STRIPE_API_BASE); undefined: no Buy button. */
  checkout: { secretKey: string; apiBase: string | undefined; packs: CreditPack[] } | undefined;
}

/** The embedding model: the operator's endpoint (EMBEDDINGS_URL) or a model folder run in process (EMBEDDINGS_MODEL_DIR). */
export type EmbeddingsConfig = EndpointEmbeddingsConfig | LocalModelConfig;

/** What every embedding model is given, wherever it runs. */
interface EmbeddingsLimits {
  /** Characters of title and text embedded per document; the rest is not. */
  maxChars: number;
  /** Texts per request to the endpoint, or per run of a local model. */
  batchSize: number;
  /** Query prompts being embedded at once; past it semantic is a 503 and hybrid lexical. */
  concurrency: number;
  /** Consecutive failures that open the query prompts' breaker, and how long it stays open. */
  breakerFailures: number;
  breakerCooldownMs: number;
}

/** An endpoint speaking OpenAI's embeddings API. */
export interface EndpointEmbeddingsConfig extends EmbeddingsLimits {
  url: string;
  model: string;
  apiKey: string | undefined;
  dimensions: number;
  timeoutMs: number;
  /** Attempts after the first, on 429, 5xx, a timeout or a refused connection. */
  retries: number;
}

/** A folder in the Hugging Face layout holding an ONNX model, run on worker threads (the vectors' length is its config.json's). */
export interface LocalModelConfig extends EmbeddingsLimits {
  modelDir: string;
  /** The model's name in stored vectors' keys; undefined: the folder's name. */
  model: string | undefined;
  /** Model worker threads, one core each. */
  threads: number;
}

export class ConfigError extends Error {}

const packageVersion: string = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')).version;

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return Number(raw);
}

function searchLanguageOf(env: NodeJS.ProcessEnv): string {
  const code = optional(env, 'SEARCH_LANGUAGE') ?? 'en';
  if (!SEARCH_LANGUAGES.includes(code)) throw new ConfigError(`SEARCH_LANGUAGE must be one of ${SEARCH_LANGUAGES.join(', ')}, got "${code}"`);
  return code;
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** TRUST_PROXY as Fastify takes it: true (every hop), a number of hops, or the proxies' addresses and CIDR ranges. */
export type TrustProxy = boolean | number | string[];

function trustProxyOf(env: NodeJS.ProcessEnv): TrustProxy {
  const raw = optional(env, 'TRUST_PROXY');
  if (raw === undefined || /^(0|false|no|off)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const proxies = raw.split(',').map((part) => part.trim());
  if (proxies.some((proxy) => !/^[0-9a-f.:]+(\/\d+)?$/i.test(proxy))) {
    throw new ConfigError(`TRUST_PROXY must be true, false, a number of hops or a comma-separated list of addresses and CIDR ranges, got "${raw}"`);
  }
  return proxies;
}

function httpUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && !/^https?:\/\/\S+$/i.test(raw)) throw new ConfigError(`${name} must be an http:// or https:// URL, got "${raw}"`);
  return raw;
}

/** A JSON object of positive integers (PRICES, STRIPE_PRICE_CREDITS); {} when unset. */
function integersByName(env: NodeJS.ProcessEnv, name: string, max: number): Record<string, number> {
  const raw = optional(env, name);
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(`${name} must be a JSON object, got "${raw}"`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError(`${name} must be a JSON object, got "${raw}"`);
  for (const [field, value] of Object.entries(parsed)) {
    if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > max) {
      throw new ConfigError(`${name}: "${field}" must be an integer from 1 to ${max}, got ${JSON.stringify(value)}`);
    }
  }
  return parsed as Record<string, number>;
}

function pricesOf(env: NodeJS.ProcessEnv): Config['prices'] {
  const prices = integersByName(env, 'PRICES', MAX_BALANCE);
  const unknown = Object.keys(prices).filter((path) => !PRICE_NAMES.includes(path));
  if (unknown.length > 0) throw new ConfigError(`PRICES: ${unknown.join(', ')} is not a billable endpoint or mode (${PRICE_NAMES.join(', ')})`);
  const modes = PRICED_MODES.filter((mode) => prices[mode] !== undefined).map((mode) => [mode, prices[mode]]);
  return Object.fromEntries([...BILLABLE_ENDPOINTS.map((path) => [path, prices[path] ?? 1]), ...modes]) as Config['prices'];
}

function webhookOf(env: NodeJS.ProcessEnv): Config['webhook'] {
  const url = httpUrl(env, 'WEBHOOK_URL');
  const secret = optional(env, 'WEBHOOK_SECRET');
  if (url === undefined) {
    if (secret !== undefined) throw new ConfigError('WEBHOOK_SECRET needs WEBHOOK_URL');
    return undefined;
  }
  if (secret === undefined || !isWebhookSecret(secret)) {
    throw new ConfigError('WEBHOOK_URL needs WEBHOOK_SECRET: whsec_ and at least 16 bytes in base64 (the Standard Webhooks form)');
  }
  return { url, secret };
}

const PACK_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** CREDIT_PACKS: a JSON array of {id, credits, price_id, label}, each checked; [] when unset. */
function creditPacksOf(env: NodeJS.ProcessEnv): CreditPack[] {
  const raw = optional(env, 'CREDIT_PACKS');
  if (raw === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('CREDIT_PACKS must be JSON: [{"id": "small", "credits": 1000, "price_id": "price_...", "label": "1,000 credits"}]');
  }
  if (!Array.isArray(parsed) || parsed.length === 0) throw new ConfigError('CREDIT_PACKS must be a non-empty JSON array of packs');
  const packs = parsed.map((pack: unknown, index): CreditPack => {
    const { id, credits, price_id: priceId, label } = (pack ?? {}) as Record<string, unknown>;
    const where = `CREDIT_PACKS[${index}]`;
    if (typeof id !== 'string' || !PACK_ID.test(id)) throw new ConfigError(`${where}.id must be 1 to 64 letters, digits, _ or -`);
    if (!Number.isSafeInteger(credits) || (credits as number) < 1 || (credits as number) > MAX_BALANCE)
      throw new ConfigError(`${where}.credits must be an integer from 1 to ${MAX_BALANCE}`);
    if (typeof priceId !== 'string' || !/^[A-Za-z0-9_]{1,200}$/.test(priceId))
      throw new ConfigError(`${where}.price_id must be a Stripe price id (price_...)`);
    if (typeof label !== 'string' || label.trim() === '' || label.length > 100)
      throw new ConfigError(`${where}.label must be a text of 1 to 100 characters`);
    return { id, credits: credits as number, price_id: priceId, label };
  });
  if (new Set(packs.map((pack) => pack.id)).size < packs.length) throw new ConfigError('CREDIT_PACKS ids must differ');
  return packs;
}

function portalOf(env: NodeJS.ProcessEnv, stripe: Config['stripe']): PortalConfig {
  const publicUrl = httpUrl(env, 'PUBLIC_URL')?.replace(/\/+$/, '');
  const packs = creditPacksOf(env);
  const secretKey = optional(env, 'STRIPE_SECRET_KEY');
  const apiBase = httpUrl(env, 'STRIPE_API_BASE');
  if (packs.length === 0) return { publicUrl, checkout: undefined };
  if (secretKey === undefined) throw new ConfigError('CREDIT_PACKS needs STRIPE_SECRET_KEY, to create Stripe Checkout Sessions');
  if (stripe === undefined) throw new ConfigError('CREDIT_PACKS needs STRIPE_WEBHOOK_SECRET, so that paid checkouts are credited');
  return { publicUrl, checkout: { secretKey, apiBase, packs } };
}

function stripeOf(env: NodeJS.ProcessEnv): Config['stripe'] {
  const webhookSecret = optional(env, 'STRIPE_WEBHOOK_SECRET');
  const priceCredits = integersByName(env, 'STRIPE_PRICE_CREDITS', MAX_BALANCE);
  if (webhookSecret === undefined) {
    if (Object.keys(priceCredits).length > 0) throw new ConfigError('STRIPE_PRICE_CREDITS needs STRIPE_WEBHOOK_SECRET');
    return undefined;
  }
  return { webhookSecret, priceCredits };
}

/** The only reader of environment variables; everything else receives a Config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const faceServiceUrl = optional(env, 'FACE_SERVICE_URL');
  if (faceServiceUrl !== undefined && !/^https?:\/\//i.test(faceServiceUrl)) {
    throw new ConfigError(`FACE_SERVICE_URL must be an http:// or https:// URL, got "${faceServiceUrl}"`);
  }
  const serviceVersion = optional(env, 'SERVICE_VERSION') ?? packageVersion;
  const stripe = stripeOf(env);
  if (!SEMVER.test(serviceVersion)) {
    throw new ConfigError(`SERVICE_VERSION must be a semantic version such as 1.3.0, got "${serviceVersion}"`);
  }
  const tlsCertFile = optional(env, 'TLS_CERT_FILE');
  const tlsKeyFile = optional(env, 'TLS_KEY_FILE');
  if ((tlsCertFile === undefined) !== (tlsKeyFile === undefined)) {
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  const redisUrl = optional(env, 'REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//i.test(redisUrl)) {
    throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, got "${redisUrl}"`);
  }
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1);
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 1);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  return {
    port: integer(env, 'PORT', 8080, 0),
    host: optional(env, 'HOST') ?? '0.0.0.0',
    dataDir: optional(env, 'DATA_DIR') ?? './data',
    databaseUrl: optional(env, 'DATABASE_URL'),
    pgPoolMax: integer(env, 'PG_POOL_MAX', 10, 1),
    pgConnectTimeoutMs: integer(env, 'PG_CONNECT_TIMEOUT_MS', 2000, 1),
    pgStatementTimeoutMs: integer(env, 'PG_STATEMENT_TIMEOUT_MS', 5000, 1),
    replicaPollMs: integer(env, 'REPLICA_POLL_MS', 250, 10),
    workers: integer(env, 'WORKERS', 1, 1),
    searchThreads: env.SEARCH_THREADS === undefined || env.SEARCH_THREADS === '' ? undefined : integer(env, 'SEARCH_THREADS', 1, 1),
    searchLanguage: searchLanguageOf(env),
    faceServiceUrl,
    faceServiceTimeoutMs: integer(env, 'FACE_SERVICE_TIMEOUT_MS', 5000, 1),
    faceBreakerFailures: integer(env, 'FACE_BREAKER_FAILURES', 5, 1),
    faceBreakerCooldownMs: integer(env, 'FACE_BREAKER_COOLDOWN_MS', 10_000, 0),
    tlsCertFile,
    tlsKeyFile,
    serviceVersion,
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 16 * 1024 * 1024, 1),
    imageMaxBytes: integer(env, 'IMAGE_MAX_BYTES', 10 * 1024 * 1024, 1),
    logLevel: optional(env, 'LOG_LEVEL') ?? 'info',
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 5000, 1),
    seedDemo: flag(env, 'SEED_DEMO', true),
    metricsEnabled: flag(env, 'METRICS', true),
    metricsPublic: flag(env, 'METRICS_PUBLIC', false),
    trustProxy: trustProxyOf(env),
    admin:
      optional(env, 'ADMIN_PORT') === undefined
        ? undefined
        : { host: optional(env, 'ADMIN_HOST') ?? '127.0.0.1', port: integer(env, 'ADMIN_PORT', 0, 0) },
    rateLimitPerSecond: integer(env, 'RATE_LIMIT_PER_S', 100, 0),
    redisUrl,
    idempotencyTtlSeconds: integer(env, 'IDEMPOTENCY_TTL_S', 86_400, 1),
    faceWorkers: integer(env, 'FACE_WORKERS', 2, 0),
    probeFetchTimeoutMs: integer(env, 'PROBE_FETCH_TIMEOUT_MS', 5000, 1),
    faceJobTimeoutMs: integer(env, 'FACE_JOB_TIMEOUT_MS', 10_000, 0),
    faceQueueMax: integer(env, 'FACE_QUEUE_MAX', 32, 0),
    purchaseUrl: httpUrl(env, 'CREDITS_PURCHASE_URL'),
    stripe,
    portal: portalOf(env, stripe),
    prices: pricesOf(env),
    embeddings: embeddingsOf(env),
    webhookAllowLinkLocal: flag(env, 'WEBHOOK_ALLOW_LINK_LOCAL', false),
    webhook: webhookOf(env),
    lowBalanceThreshold: optional(env, 'LOW_BALANCE_THRESHOLD') === undefined ? null : integer(env, 'LOW_BALANCE_THRESHOLD', 0, 0),
  };
}

/** EMBEDDINGS_URL with its model and dimensions, or EMBEDDINGS_MODEL_DIR, or neither. */
function embeddingsOf(env: NodeJS.ProcessEnv): EmbeddingsConfig | undefined {
  const url = httpUrl(env, 'EMBEDDINGS_URL');
  const model = optional(env, 'EMBEDDINGS_MODEL');
  const dimensions = integer(env, 'EMBEDDINGS_DIMENSIONS', 0, 1);
  const modelDir = optional(env, 'EMBEDDINGS_MODEL_DIR');
  if (modelDir !== undefined) {
    if (url !== undefined) throw new ConfigError('EMBEDDINGS_URL and EMBEDDINGS_MODEL_DIR name two models: set one of them');
    if (dimensions > 0)
      throw new ConfigError(
        "EMBEDDINGS_DIMENSIONS is not set with EMBEDDINGS_MODEL_DIR: the vectors' length is the model's (config.json's hidden_size)",
      );
    return { modelDir, model, threads: integer(env, 'EMBEDDINGS_THREADS', availableParallelism(), 1), ...embeddingsLimitsOf(env, 32) };
  }
  if (url === undefined) {
    if (model !== undefined || dimensions > 0)
      throw new ConfigError('EMBEDDINGS_MODEL and EMBEDDINGS_DIMENSIONS need EMBEDDINGS_URL (an OpenAI-style /v1/embeddings endpoint)');
    return undefined;
  }
  if (model === undefined) throw new ConfigError('EMBEDDINGS_URL needs EMBEDDINGS_MODEL, the model name the endpoint expects');
  if (dimensions === 0) throw new ConfigError("EMBEDDINGS_URL needs EMBEDDINGS_DIMENSIONS, the length of the model's vectors (384, 768, 1536 ...)");
  return {
    url,
    model,
    apiKey: optional(env, 'EMBEDDINGS_API_KEY'),
    dimensions,
    timeoutMs: integer(env, 'EMBEDDINGS_TIMEOUT_MS', 10_000, 1),
    retries: integer(env, 'EMBEDDINGS_RETRIES', 3, 0),
    ...embeddingsLimitsOf(env, 64),
  };
}

/** A local model's batch is padded to its longest text: smaller batches than an endpoint's waste less. */
function embeddingsLimitsOf(env: NodeJS.ProcessEnv, batchSize: number): EmbeddingsLimits {
  return {
    maxChars: integer(env, 'EMBEDDINGS_MAX_CHARS', 2000, 1),
    batchSize: integer(env, 'EMBEDDINGS_BATCH', batchSize, 1),
    concurrency: integer(env, 'EMBEDDINGS_CONCURRENCY', 16, 1),
    breakerFailures: integer(env, 'EMBEDDINGS_BREAKER_FAILURES', 5, 1),
    breakerCooldownMs: integer(env, 'EMBEDDINGS_BREAKER_COOLDOWN_MS', 10_000, 0),
  };
}

/**
 * SEARCH_THREADS, or else: with one process, a thread per core up to 4 (measured on 2 cores only:
 * 1.4-1.7x the 3- and 8-word searches at a million documents; BENCHMARKS.md); with
 * several processes (`--workers`), one each, since the processes use the cores already.
 */
export function searchThreadsOf(config: Pick<Config, 'searchThreads' | 'workers'>): number {
  return config.searchThreads ?? (config.workers > 1 ? 1 : Math.min(4, availableParallelism()));
}
