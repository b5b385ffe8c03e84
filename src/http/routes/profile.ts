import type { FastifyInstance } from 'fastify';
import { freeErrorResponses, noSecurity, successHeaders } from '../schemas/common.js';

const schema = {
  summary: 'Static demo profile',
  description: 'The same demo data for every caller; needs no key and costs nothing.',
  operationId: 'getProfile',
  tags: ['free'],
  security: noSecurity,
  response: {
    200: {
      description: 'The demo profile.',
      headers: successHeaders('free'),
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
    ...freeErrorResponses,
  },
} as const;

const DEMO_PROFILE = { status: 200, message: 'Demo profile', user: { name: 'Ada Lovelace', age: 36 } };

export function profileRoute(app: FastifyInstance): void {
  app.get('/profile', { schema }, async () => DEMO_PROFILE);
}
