/** Shared schema pieces: the single source for validation, types and the OpenAPI document. */

import { API_KEY_PATTERN_SOURCE } from '../../billing/keys.js';

export const envelopeSchema = {
  type: 'object',
  required: ['status', 'message'],
  properties: {
    status: { type: 'integer', description: 'Equals the HTTP status code.' },
    message: { type: 'string', description: 'What went wrong and what to do.' },
    purchase_url: { type: 'string', description: 'On 402, where to buy credits, when the operator has set one (CREDITS_PURCHASE_URL).' },
  },
  additionalProperties: true,
} as const;

/** Credits of a balance that expire, and when, soonest first. */
export const expiringSchema = {
  type: 'array',
  description: 'Credits of the balance that expire, and when, soonest first (they are spent first).',
  items: {
    type: 'object',
    required: ['credits', 'at'],
    properties: { credits: { type: 'integer' }, at: { type: 'string', format: 'date-time' } },
  },
} as const;

/**
 * Identifiers, names, references and URLs hold no control characters: PostgreSQL cannot store NUL
 * or an unpaired surrogate, and ESC, a line break or a bidirectional override could recolour a
 * terminal, forge a line or reorder it wherever the value is printed (control-characters.ts).
 */
export const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069\\ud800-\\udfff]*$';

/** A string field of that kind. */
export function plainText<Extra extends Record<string, unknown>>(extra: Extra) {
  return { type: 'string', pattern: NO_CONTROL_CHARACTERS, ...extra } as const;
}

export const apiKeyHeader = {
  type: 'string',
  pattern: API_KEY_PATTERN_SOURCE,
  description: 'Your API key: 64 hexadecimal characters (case-insensitive).',
} as const;

export const keyedHeaders = {
  type: 'object',
  required: ['x-api-key'],
  properties: { 'x-api-key': apiKeyHeader },
} as const;

export const idempotencyKeyHeader = {
  type: 'string',
  pattern: '^[\\x21-\\x7E]{1,255}$',
  description:
    'Makes a retry safe: the first request with this key runs and is charged; a repeat with the same key and the same ' +
    'request gets the stored response again (header idempotent-replayed: true) and costs nothing. 1 to 255 visible ASCII characters.',
} as const;

/** Headers of the billable routes: the key, and an optional Idempotency-Key. */
export const billableHeaders = {
  type: 'object',
  required: ['x-api-key'],
  properties: { 'x-api-key': apiKeyHeader, 'idempotency-key': idempotencyKeyHeader },
} as const;

/** Response headers, as the OpenAPI document lists them. */
const header = (description: string, type: 'string' | 'integer' = 'string') => ({ type, description });
export const responseHeaders = {
  requestId: { 'x-request-id': header('Identifies this request in the service logs: quote it when reporting a problem.') },
  charged: {
    'x-credits-remaining': header('The balance after this request, which spent its price.', 'integer'),
    'x-credits-charged': header(
      "Credits this request took: its price (PRICES, or the key's own); 0 for an answer replayed or already paid.",
      'integer',
    ),
    'idempotent-replayed': header('"true" when this is the stored answer to an earlier request with the same Idempotency-Key (not charged again).'),
  },
  rateLimit: {
    ratelimit: header(
      'Where the key stands in its rate limit (IETF draft-ietf-httpapi-ratelimit-headers): remaining requests r, seconds to reset t.',
    ),
    'ratelimit-policy': header("The key's rate-limit policy: q requests per w seconds."),
  },
  retryAfter: { 'retry-after': header('Seconds to wait before retrying.', 'integer') },
  allow: { allow: header('The methods this path answers.') },
} as const;

type Headers = Record<string, { type: string; description: string }>;

/** An error answer: the envelope, with x-request-id and any headers of its own. */
export const errorResponse = (description: string, headers: Headers = {}) => ({
  description,
  headers: { ...responseHeaders.requestId, ...headers },
  $ref: 'Envelope#',
});

/** A success answer's headers: x-request-id; on keyed routes the rate limit; on billable ones what the charge left. */
export const successHeaders = (route: 'free' | 'keyed' | 'billable') => ({
  ...responseHeaders.requestId,
  ...(route === 'free' ? {} : responseHeaders.rateLimit),
  ...(route === 'billable' ? responseHeaders.charged : {}),
});

/** What any request may be answered, whatever its route: refused by the HTTP parser (400), or a fault (500). */
const protocolResponses = {
  400: errorResponse(
    'The request is invalid: a missing or malformed header or body field, a body nested over 64 levels, or a request that is not valid HTTP.',
  ),
  500: errorResponse('Unexpected error; the x-request-id header identifies it in the logs.'),
} as const;

/** Error responses of the free routes that need no key. */
export const freeErrorResponses = protocolResponses;

/** Answers given once the key's rate limit was taken carry where the key stands. */
const limited = (description: string, headers: Headers = {}) => errorResponse(description, { ...responseHeaders.rateLimit, ...headers });

/** Error responses every keyed route can give. */
export const keyedErrorResponses = {
  ...protocolResponses,
  401: errorResponse('The API key is unknown.'),
  403: limited('The API key is revoked or disabled.'),
  429: limited("Over the key's request rate; Retry-After says when to retry (not charged).", responseHeaders.retryAfter),
  503: limited('The data store is not available right now (not charged); Retry-After says when to retry.', responseHeaders.retryAfter),
} as const;

export const billableErrorResponses = {
  ...keyedErrorResponses,
  429: limited(
    "Over the key's request rate, or a spend cap the price would pass (with x-credits-remaining); Retry-After says when to retry (not charged).",
    { ...responseHeaders.retryAfter, 'x-credits-remaining': responseHeaders.charged['x-credits-remaining'] },
  ),
  402: limited('The API key has no credits left.'),
  405: errorResponse('HEAD and OPTIONS are not served on billable routes; Allow names the method that is.', responseHeaders.allow),
  409: limited('A request with this Idempotency-Key is still running (not charged); retry after Retry-After.', responseHeaders.retryAfter),
  422: limited('This Idempotency-Key was used for a different request (not charged).'),
} as const;

/** An answer given after the debit: it says what the charge left. */
export const chargedResponse = (description: string, headers: Headers = {}) => limited(description, { ...responseHeaders.charged, ...headers });

/** A body route's 413. */
export const bodyTooLargeResponse = errorResponse('The body is larger than BODY_LIMIT_BYTES (not charged).');

export const security = [{ apiKey: [] }];

/** Free routes: no key is asked for. */
export const noSecurity = [];

/** Per-route messages for validation failures, by the failing field's path ('' for the body itself). */
export type FieldMessages = Record<string, string>;

declare module 'fastify' {
  interface FastifyContextConfig {
    fieldMessages?: FieldMessages;
  }
}

/** A path's `{id}`: a key's, a webhook endpoint's or a delivery's. */
export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: plainText({ minLength: 1, maxLength: 64 }) },
} as const;
