/** Shared schema pieces: the single source for validation, types and the OpenAPI document. */

export const envelopeSchema = {
  type: 'object',
  required: ['status', 'message'],
  properties: {
    status: { type: 'integer', description: 'Equals the HTTP status code.' },
    message: { type: 'string', description: 'What went wrong and what to do.' },
  },
  additionalProperties: true,
} as const;

export const apiKeyHeader = {
  type: 'string',
  pattern: '^[0-9a-fA-F]{64}$',
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

const errorResponse = (description: string) => ({ description, ...envelopeSchema });

/** Error responses every keyed route can give. */
export const keyedErrorResponses = {
  400: errorResponse('Invalid request: a missing or malformed header or body field.'),
  401: errorResponse('The API key is unknown.'),
  403: errorResponse('The API key is revoked or disabled.'),
  429: errorResponse('Over the key\'s request rate; Retry-After says when to retry (not charged).'),
  500: errorResponse('Unexpected error; the x-request-id header identifies it in the logs.'),
} as const;

export const billableErrorResponses = {
  ...keyedErrorResponses,
  402: errorResponse('The API key has no credits left.'),
  409: errorResponse('A request with this Idempotency-Key is still running (not charged).'),
  422: errorResponse('This Idempotency-Key was used for a different request (not charged).'),
} as const;

export const security = [{ apiKey: [] }];

/** Per-route messages for validation failures, by the failing field's path ('' for the body itself). */
export type FieldMessages = Record<string, string>;

declare module 'fastify' {
  interface FastifyContextConfig {
    fieldMessages?: FieldMessages;
  }
}
