/**
 * The product's fixed rules that configuration and the domains both check values against. It
 * imports nothing, so that config.ts reads no domain.
 */

/**
 * The most credits one key may hold, and so the most one grant may add: far beyond any real
 * balance, and far below where a double stops counting every credit (2^53).
 */
export const MAX_BALANCE = 1_000_000_000_000;

/** The endpoints a request pays for; PRICES and a key's prices are keyed by these paths. */
export const BILLABLE_ENDPOINTS = ['/document', '/query', '/face/search'] as const;

export type BillableEndpoint = (typeof BILLABLE_ENDPOINTS)[number];

/**
 * /query's semantic and hybrid modes, and a lexical query asking for highlights, priced apart when
 * PRICES or a key's prices name them; else as /query.
 */
export const PRICED_MODES = ['/query:semantic', '/query:hybrid', '/query:highlight'] as const;

export type PricedMode = (typeof PRICED_MODES)[number];

/** What PRICES and a key's prices may name. */
export const PRICE_NAMES: readonly string[] = [...BILLABLE_ENDPOINTS, ...PRICED_MODES];

/** The prefix of a webhook secret in the Standard Webhooks form. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** Whether a secret is whsec_ and base64 of at least 16 bytes (WEBHOOK_SECRET is checked with it). */
export function isWebhookSecret(secret: string): boolean {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : '';
  return /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && Buffer.from(encoded, 'base64').length >= 16;
}

/** A pack of credits the portal sells through Stripe Checkout (CREDIT_PACKS): its id, credits, Stripe price and label. */
export interface CreditPack {
  id: string;
  credits: number;
  price_id: string;
  label: string;
}

/**
 * The languages documents and queries may be analysed in (ISO 639-1; `none`: no stemming, no
 * stopwords): a document's `language`, a query's, SEARCH_LANGUAGE. The engine's table
 * (search/engine/languages.ts) holds one analysis for each, which a test checks.
 */
export const SEARCH_LANGUAGES: readonly string[] = [
  'da',
  'de',
  'en',
  'es',
  'fi',
  'fr',
  'hu',
  'it',
  'ja',
  'nl',
  'no',
  'none',
  'pt',
  'ro',
  'ru',
  'sv',
  'tr',
  'zh',
];
