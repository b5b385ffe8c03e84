import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminKeyOf, changedKey, keysFor } from '../keys.js';
import { adminKey, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses } from '../schemas.js';

const schema = {
  summary: "Set a key's rate limit",
  description:
    'Requests per second for this key; null returns it to RATE_LIMIT_PER_S. The instance that answers applies it at once; ' +
    'every other instance within a second. A revoked key is not changed (409).',
  operationId: 'adminSetKeyRate',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  body: {
    type: 'object',
    required: ['rate'],
    additionalProperties: false,
    properties: { rate: { type: ['number', 'null'], exclusiveMinimum: 0, description: "Requests per second; null for the service's default." } },
  },
  response: {
    200: { description: 'The key as it is now.', headers: adminSuccessHeaders, ...adminKey },
    404: errorResponse('No key has this id.'),
    409: errorResponse('The key is revoked, which is permanent: nothing about it changes.'),
    ...adminWriteErrorResponses,
  },
} as const;

export function setKeyRateRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.put('/admin/keys/:id/rate', { schema, ...hooks }, async (request) => {
    const id = (request.params as { id: string }).id;
    const change = await keysFor(services, request).setRateLimit(id, (request.body as { rate: number | null }).rate);
    return adminKeyOf(changedKey(services, change, id));
  });
}
