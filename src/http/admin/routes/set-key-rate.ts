import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import type { KeyedHooks } from '../../keyed/step.js';
import { errorResponse } from '../../schemas/common.js';
import { adminKeyOf, keysFor } from '../keys.js';
import { adminKey, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, idParams } from '../schemas.js';

const schema = {
  summary: "Set a key's rate limit",
  description: 'Requests per second for this key; null returns it to RATE_LIMIT_PER_S. Every instance applies it within a second.',
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
    ...adminWriteErrorResponses,
  },
} as const;

export function setKeyRateRoute(app: FastifyInstance, services: Services, hooks: KeyedHooks): void {
  app.put('/admin/keys/:id/rate', { schema, ...hooks }, async (request) => {
    const id = (request.params as { id: string }).id;
    const key = await keysFor(services, request).setRateLimit(id, (request.body as { rate: number | null }).rate);
    if (!key) throw new ApiError('KEY_NOT_FOUND', `No key has id "${id}".`);
    return adminKeyOf(key);
  });
}
