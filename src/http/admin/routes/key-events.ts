import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { existingKey } from '../keys.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders, limitParameter, pageLimit } from '../schemas.js';

/** Events as webhooks carry them, a page of them. */
export const eventsAnswer = {
  description: 'The latest events, as webhooks carry them.',
  headers: adminSuccessHeaders,
  type: 'object',
  required: ['events'],
  properties: {
    events: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'type', 'created_at', 'data'],
        properties: {
          id: { type: 'string' },
          type: { type: 'string' },
          created_at: { type: 'string', format: 'date-time' },
          data: { type: 'object', additionalProperties: true },
        },
      },
    },
  },
} as const;

const schema = {
  summary: "A key's billing events, newest first",
  description:
    'The events its changes raised (credits.low, credits.depleted, credits.granted, credits.expired, key.revoked, key.rolled): what webhook endpoints are sent.',
  operationId: 'adminKeyEvents',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  querystring: { type: 'object', additionalProperties: false, properties: { limit: limitParameter } },
  response: {
    200: eventsAnswer,
    404: errorResponse('No key has this id.'),
    ...adminErrorResponses,
  },
} as const;

/** GET /admin/keys/{id}/events. */
export function keyEventsRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/admin/keys/:id/events', { schema, ...hooks }, async (request) => {
    const key = await existingKey(services.store, (request.params as { id: string }).id);
    const { limit } = request.query as { limit?: string };
    return { events: await services.store.webhooks.listEvents(pageLimit(limit), key.id) };
  });
}
