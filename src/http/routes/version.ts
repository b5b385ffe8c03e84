import type { FastifyInstance } from 'fastify';
import { freeErrorResponses, noSecurity, successHeaders } from '../schemas/common.js';

const schema = {
  summary: 'Deployed version',
  description: 'The semantic version this deployment reports (SERVICE_VERSION, else the package version).',
  operationId: 'getVersion',
  tags: ['free'],
  security: noSecurity,
  response: {
    200: {
      description: 'The version.',
      headers: successHeaders('free'),
      type: 'object',
      required: ['status', 'version'],
      properties: { status: { type: 'integer' }, version: { type: 'string', description: 'Semantic version.' } },
    },
    ...freeErrorResponses,
  },
} as const;

export function versionRoute(app: FastifyInstance, version: string): void {
  app.get('/version', { schema }, async () => ({ status: 200, version }));
}
