import type { FastifyInstance } from 'fastify';

const schema = {
  summary: 'Static demo profile',
  description: 'The same demo data for every caller; needs no key and costs nothing.',
  tags: ['free'],
  response: {
    200: {
      type: 'object',
      required: ['status', 'message', 'user'],
      properties: {
        status: { type: 'integer' },
        message: { type: 'string' },
        user: {
          type: 'object',
          required: ['name', 'age'],
          properties: { name: { type: 'string' }, age: { type: 'integer' } },
        },
      },
    },
  },
} as const;

const DEMO_PROFILE = { status: 200, message: 'Demo profile', user: { name: 'Ada Lovelace', age: 36 } };

export function profileRoute(app: FastifyInstance): void {
  app.get('/profile', { schema }, async () => DEMO_PROFILE);
}
