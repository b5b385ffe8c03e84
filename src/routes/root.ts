import type { FastifyInstance } from 'fastify';

const schema = {
  summary: 'Greeting and availability check',
  tags: ['free'],
  response: {
    200: {
      type: 'object',
      required: ['status', 'message'],
      properties: { status: { type: 'integer' }, message: { type: 'string' } },
    },
  },
} as const;

export function rootRoute(app: FastifyInstance): void {
  app.get('/', { schema }, async () => ({
    status: 200,
    message: 'metered-search is running. Choose an endpoint: /query, /document, /face/search, /credits, /version, /profile, /nettest (docs at /docs).',
  }));
}
