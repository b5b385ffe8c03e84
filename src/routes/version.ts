import type { FastifyInstance } from 'fastify';

const schema = {
  summary: 'Deployed version',
  tags: ['free'],
  response: {
    200: {
      type: 'object',
      required: ['status', 'version'],
      properties: { status: { type: 'integer' }, version: { type: 'string', description: 'Semantic version.' } },
    },
  },
} as const;

export function versionRoute(app: FastifyInstance, version: string): void {
  app.get('/version', { schema }, async () => ({ status: 200, version }));
}
