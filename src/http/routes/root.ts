import type { FastifyInstance } from 'fastify';
import { freeErrorResponses, noSecurity, successHeaders } from '../schemas/common.js';

const schema = {
  summary: 'Greeting and availability check',
  description: 'Answers while the service runs, naming the endpoints; needs no key and costs nothing.',
  operationId: 'getRoot',
  tags: ['free'],
  security: noSecurity,
  response: {
    200: {
      description: 'The service is running.',
      headers: successHeaders('free'),
      type: 'object',
      required: ['status', 'message'],
      properties: { status: { type: 'integer' }, message: { type: 'string' } },
    },
    ...freeErrorResponses,
  },
} as const;

export function rootRoute(app: FastifyInstance): void {
  app.get('/', { schema }, async () => ({
    status: 200,
    message:
      'metered-search is running. Choose an endpoint: /query, /document, /face/search, /credits, /version, /profile, /nettest (docs at /docs).',
  }));
}
