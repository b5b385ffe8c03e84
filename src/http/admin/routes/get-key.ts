import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services/services.js';
import type { KeyedHooks } from '../../keyed/step.js';
import { errorResponse } from '../../schemas/common.js';
import { adminKeyOf, existingKey } from '../keys.js';
import { adminErrorResponses, adminKey, adminSecurity, adminSuccessHeaders, keyIdParams } from '../schemas.js';

const schema = {
  summary: 'One API key, with its use',
  description: 'The key, when it was last charged, and how many charges it paid on each endpoint.',
  operationId: 'adminGetKey',
  tags: ['admin'],
  security: adminSecurity,
  params: keyIdParams,
  response: {
    200: {
      description: 'The key, when it was last charged, and its charges by endpoint.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: [...adminKey.required, 'last_used_at', 'charges_by_endpoint'],
      properties: {
        ...adminKey.properties,
        last_used_at: { type: ['string', 'null'], format: 'date-time' },
        charges_by_endpoint: { type: 'object', additionalProperties: { type: 'integer' } },
      },
    },
    404: errorResponse('No key has this id.'),
    ...adminErrorResponses,
  },
} as const;

export function getKeyRoute(app: FastifyInstance, services: Services, hooks: KeyedHooks): void {
  app.get('/admin/keys/:id', { schema, ...hooks }, async (request) => {
    const key = await existingKey(services.store, (request.params as { id: string }).id);
    const activity = await services.store.ledger.keyActivity(key.id);
    return { ...adminKeyOf(key), last_used_at: activity.lastUsedAt, charges_by_endpoint: activity.chargesByEndpoint };
  });
}
