import { MAX_BALANCE, PRICE_NAMES } from '../../billing/ledger.js';
import { errorResponse, responseHeaders } from '../schemas/common.js';

/** The admin routes' security: a bearer token from `metered-search admin tokens create`. */
export const adminSecurity = [{ adminToken: [] }];

/** Credits per request by billable endpoint (and /query's priced modes), as PRICES takes them. */
export const pricesSchema = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(PRICE_NAMES.map((path) => [path, { type: 'integer', minimum: 1, maximum: MAX_BALANCE }])),
} as const;

export const adminKey = {
  type: 'object',
  required: [
    'id',
    'account_id',
    'name',
    'balance',
    'status',
    'rate',
    'created_at',
    'prices',
    'low_balance_threshold',
    'expires_at',
    'metadata',
    'spend_caps',
  ],
  properties: {
    id: { type: 'string' },
    account_id: { type: 'string', description: 'The account whose balance this key spends.' },
    name: { type: 'string' },
    balance: { type: 'integer', description: "The account's balance, which all its keys share." },
    status: { type: 'string', enum: ['active', 'disabled', 'revoked'] },
    rate: { type: ['number', 'null'], description: "Requests per second; null for the service's default." },
    created_at: { type: 'string', format: 'date-time' },
    prices: { ...pricesSchema, type: ['object', 'null'], description: "The account's own credits per request, over PRICES; null: PRICES." },
    low_balance_threshold: {
      type: ['integer', 'null'],
      description: "The account's balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD.",
    },
    expires_at: { type: ['string', 'null'], format: 'date-time', description: 'When the key stops working; null: never.' },
    metadata: { type: ['object', 'null'], additionalProperties: true, description: 'Your own data about the key; null: none.' },
    spend_caps: {
      type: ['array', 'null'],
      items: { type: 'object', required: ['credits', 'interval'], properties: { credits: { type: 'integer' }, interval: { type: 'string' } } },
      description: 'At most this many credits a UTC day, ISO week or calendar month; null: no cap.',
    },
  },
} as const;

const spendCapsView = {
  type: ['array', 'null'],
  items: { type: 'object', required: ['credits', 'interval'], properties: { credits: { type: 'integer' }, interval: { type: 'string' } } },
} as const;

export const adminAccount = {
  type: 'object',
  required: ['id', 'name', 'external_id', 'metadata', 'balance', 'created_at', 'prices', 'low_balance_threshold', 'spend_caps'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    external_id: { type: ['string', 'null'], description: 'Your own id for this customer, unique among accounts; null: none.' },
    metadata: { type: ['object', 'null'], additionalProperties: true, description: 'Your own data about the account; null: none.' },
    balance: { type: 'integer', description: 'What every key of the account spends from.' },
    created_at: { type: 'string', format: 'date-time' },
    prices: { ...pricesSchema, type: ['object', 'null'], description: "The account's own credits per request, over PRICES; null: PRICES." },
    low_balance_threshold: {
      type: ['integer', 'null'],
      description: 'The balance at or below which credits.low is sent; null: LOW_BALANCE_THRESHOLD.',
    },
    spend_caps: { ...spendCapsView, description: 'At most this many credits a UTC day, ISO week or calendar month over all its keys; null: no cap.' },
  },
} as const;

/** The most a key's or an account's metadata may hold, as JSON. */
export const MAX_METADATA_BYTES = 4096;

/** A key's end, spend caps and metadata, as create and PATCH take them. */
export const keyLifeProperties = {
  expires_at: {
    type: ['string', 'null'],
    format: 'date-time',
    description:
      'When the key stops working (RFC 3339, later than now): after it every request with it is 403, like a disabled key, and ' +
      'key.expired is sent once. null: never.',
  },
  spend_caps: {
    type: ['array', 'null'],
    maxItems: 3,
    items: {
      type: 'object',
      required: ['credits', 'interval'],
      additionalProperties: false,
      properties: {
        credits: { type: 'integer', minimum: 1, maximum: MAX_BALANCE },
        interval: { type: 'string', enum: ['day', 'week', 'month'] },
      },
    },
    description:
      'At most `credits` spent a UTC calendar day, ISO week or calendar month, one cap per interval. A billable request whose ' +
      'price would take a period over a cap is 429 (Retry-After: until the period ends), uncharged, and credits.cap_reached is ' +
      'sent once per cap and period. Decided in the debit itself, on every instance. null: no cap.',
  },
  metadata: {
    type: ['object', 'null'],
    additionalProperties: true,
    description: `Your own data about the key (your customer id, say): a JSON object of at most ${MAX_METADATA_BYTES} bytes, returned by the admin API and carried in the key's webhook events. null: none.`,
  },
} as const;

/** What every admin route may answer besides its own. */
export const adminErrorResponses = {
  400: errorResponse('The request is invalid: the message names the field.'),
  401: errorResponse('No admin token, a malformed one, or one unknown or revoked.'),
  403: errorResponse('The admin token lacks the scope this route needs: the message names it.'),
  500: errorResponse('Unexpected error; the x-request-id header identifies it in the logs.'),
  503: errorResponse('The data store is not available right now; Retry-After says when to retry.', responseHeaders.retryAfter),
} as const;

/** What a route that changes something may answer: the same, its 403 a write scope the token lacks. */
export const adminWriteErrorResponses = adminErrorResponses;

export const adminSuccessHeaders = responseHeaders.requestId;

/** What a DELETE answers: the id of what is gone. */
export const deletedResponse = {
  description: 'Deleted.',
  headers: adminSuccessHeaders,
  type: 'object',
  required: ['deleted'],
  properties: { deleted: { type: 'string' } },
} as const;

/** A list's page size: query strings are text, and are not coerced, so it is digits. */
export const limitParameter = {
  type: 'string',
  pattern: '^(1000|[1-9][0-9]{0,2})$',
  description: 'How many to return, 1 to 1000 (default 100).',
} as const;

export function pageLimit(raw: string | undefined): number {
  return raw === undefined ? 100 : Number(raw);
}
