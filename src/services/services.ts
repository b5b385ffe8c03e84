import type { AdminTokens } from '../admin/admin-tokens.js';
import type { CreditService } from '../billing/credit-service.js';
import type { StripeCheckout } from '../billing/stripe-checkout.js';
import type { PortalConfig, TrustProxy } from '../config.js';
import type { FaceSearchBackend } from '../faces/face-search.js';
import type { ProbeImageFetcher } from '../faces/probe-fetch.js';
import type { IdempotencyService } from '../idempotency/idempotency-service.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Clock } from '../platform/clock.js';
import type { RateLimitService } from '../rate-limit/rate-limit.js';
import type { SearchService } from '../search/search-service.js';
import type { Store } from '../store/store.js';
import type { SynonymService } from '../synonyms/synonym-service.js';

/** Everything the HTTP layer is given; built by the server (or a test) and injected into the app. */
export interface Services {
  store: Store;
  /** The tokens of the admin API. */
  adminTokens: AdminTokens;
  credits: CreditService;
  /** The time as the service reads it (Date.now, unless a test moves it). */
  clock: Clock;
  idempotency: IdempotencyService;
  rateLimits: RateLimitService;
  search: SearchService;
  /** The synonym rules searches apply, kept current from the store. */
  synonyms: SynonymService;
  /** Fetches probe_image_url for /face/search, refusing non-public addresses. */
  probeImages: ProbeImageFetcher;
  /** What GET /metrics reports; absent when METRICS=false. */
  metrics: Metrics | undefined;
  /** Absent when no face service is configured: /face/search then answers 503. */
  face: FaceSearchBackend | undefined;
  /** Credit packs sold through Stripe Checkout in the portal; absent without CREDIT_PACKS. */
  checkout?: StripeCheckout;
}

export interface AppSettings {
  serviceVersion: string;
  bodyLimitBytes: number;
  /** GET /metrics without an admin token (METRICS_PUBLIC). */
  metricsPublic: boolean;
  imageMaxBytes: number;
  /** Where callers buy credits (the portal's buy page, or CREDITS_PURCHASE_URL): named in every 402. */
  purchaseUrl: string | undefined;
  /** The customer portal: its public origin and the credit packs it sells. */
  portal: PortalConfig;
  /** Credits per request by billable endpoint (PRICES); a key's own prices come first. */
  prices: Partial<Record<string, number>>;
  /** Stripe top-ups (STRIPE_WEBHOOK_SECRET, STRIPE_PRICE_CREDITS); undefined: the webhook is not served. */
  stripe: { webhookSecret: string; priceCredits: Record<string, number> } | undefined;
  /** Webhook URLs may name link-local and cloud-metadata addresses (WEBHOOK_ALLOW_LINK_LOCAL). */
  webhookAllowLinkLocal: boolean;
  /** Which proxies' X-Forwarded-* headers to believe (TRUST_PROXY). */
  trustProxy: TrustProxy;
  /** Limits on slow or idle clients, so that they cannot hold connections the service needs. */
  timeouts: { requestMs: number; headersMs: number; keepAliveMs: number };
}
