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

const errorResponse = (description: string) => ({ description, ...envelopeSchema });

/** Error responses every keyed route can give. */
export const keyedErrorResponses = {
  400: errorResponse('Invalid request: a missing or malformed header or body field.'),
  401: errorResponse('The API key is unknown.'),
  403: errorResponse('The API key is revoked or disabled.'),
  500: errorResponse('Unexpected error; the x-request-id header identifies it in the logs.'),
} as const;

export const billableErrorResponses = {
  ...keyedErrorResponses,
  402: errorResponse('The API key has no credits left.'),
} as const;

export const security = [{ apiKey: [] }];

/** Per-route messages for validation failures, by the failing field's path ('' for the body itself). */
export type FieldMessages = Record<string, string>;

declare module 'fastify' {
  interface FastifyContextConfig {
    fieldMessages?: FieldMessages;
  }
}
