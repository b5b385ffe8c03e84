import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { existingAccount } from '../accounts.js';
import { adminErrorResponses, adminSecurity, limitParameter, pageLimit } from '../schemas.js';
import { eventsAnswer } from './key-events.js';

const schema = {
  summary: "An account's billing events, newest first",
  description: "Those of its keys and its own (an account's top-up, refill or expiry, which carry no key_id): what webhook endpoints are sent.",
  operationId: 'adminAccountEvents',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  querystring: { type: 'object', additionalProperties: false, properties: { limit: limitParameter } },
  response: {
    200: eventsAnswer,
    404: errorResponse('No account has this id.'),
    ...adminErrorResponses,
  },
} as const;

/** GET /admin/accounts/{id}/events. */
export function accountEventsRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/admin/accounts/:id/events', { schema, ...hooks }, async (request) => {
    const account = await existingAccount(services.store, (request.params as { id: string }).id);
    const { limit } = request.query as { limit?: string };
    return { events: await services.store.webhooks.listEvents(pageLimit(limit), account.id) };
  });
}
