import type { FastifyInstance } from 'fastify';
import type { AdminTokenRecord } from '../../../admin/admin-store.js';
import { ApiError } from '../../../errors.js';
import { placeOf } from '../../../platform/cursor.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams, plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, limitParameter, pageLimit } from '../schemas.js';

const listSchema = {
  summary: 'Webhook deliveries, newest first, with their attempts',
  description:
    'One delivery per event and endpoint. state: pending (attempts continue with backoff, the first retry within 30 s, ' +
    'for about 24 hours), delivered (the endpoint answered 2xx), failed (it never did, or was deleted). ' +
    "Every attempt of a delivery carries the event's id as webhook-id.",
  operationId: 'adminListWebhookDeliveries',
  tags: ['admin'],
  security: adminSecurity,
  querystring: { type: 'object', additionalProperties: false, properties: { limit: limitParameter, cursor: plainText({}) } },
  response: {
    200: {
      description: 'A page of deliveries and the cursor of the next one (null after the last).',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['deliveries', 'next_cursor'],
      properties: {
        deliveries: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'event_id', 'type', 'endpoint', 'attempts', 'state', 'next_attempt_at', 'created_at'],
            properties: {
              id: { type: 'string' },
              event_id: { type: 'string' },
              type: { type: 'string' },
              endpoint: {
                type: 'object',
                required: ['id', 'url'],
                properties: { id: { type: 'string' }, url: { type: ['string', 'null'], description: 'null once the endpoint is deleted.' } },
              },
              attempts: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['at', 'status'],
                  properties: {
                    at: { type: 'string', format: 'date-time' },
                    status: { type: ['integer', 'null'], description: 'What the endpoint answered; null: no answer.' },
                    error: {
                      type: 'string',
                      description:
                        'Why the attempt failed, starting with its kind: dns, refused, timeout, tls, connection, or the HTTP status answered. Absent on success.',
                    },
                  },
                },
              },
              state: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
              next_attempt_at: { type: ['string', 'null'], format: 'date-time' },
              created_at: { type: 'string', format: 'date-time' },
            },
          },
        },
        next_cursor: { type: ['string', 'null'] },
      },
    },
    ...adminErrorResponses,
  },
} as const;

const retrySchema = {
  summary: 'Send a webhook delivery again',
  description: 'Makes it pending and due now, whatever its state: it is sent within a second, with the same webhook-id.',
  operationId: 'adminRetryWebhookDelivery',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  response: {
    200: {
      description: 'Pending again.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['id', 'state'],
      properties: { id: { type: 'string' }, state: { type: 'string', enum: ['pending'] } },
    },
    404: errorResponse('No delivery has this id.'),
    ...adminWriteErrorResponses,
  },
} as const;

/** GET /admin/webhooks/deliveries and POST /admin/webhooks/deliveries/{id}/retry. */
export function webhookDeliveryRoutes(app: FastifyInstance, services: Services, read: RouteHooks, write: RouteHooks): void {
  app.get('/admin/webhooks/deliveries', { schema: listSchema, ...read }, async (request) => {
    const { limit, cursor } = request.query as { limit?: string; cursor?: string };
    if (cursor !== undefined && placeOf(cursor) === undefined)
      throw new ApiError('BAD_REQUEST', 'cursor is not one this API gave: pass next_cursor as it came.');
    const page = await services.store.webhooks.listDeliveries(pageLimit(limit), cursor ?? null);
    return {
      deliveries: page.deliveries.map((delivery) => ({
        id: delivery.id,
        event_id: delivery.eventId,
        type: delivery.type,
        endpoint: { id: delivery.endpointId, url: delivery.endpointUrl },
        attempts: delivery.attempts,
        state: delivery.state,
        next_attempt_at: delivery.nextAttemptAt,
        created_at: delivery.createdAt,
      })),
      next_cursor: page.nextCursor,
    };
  });
  app.post('/admin/webhooks/deliveries/:id/retry', { schema: retrySchema, ...write }, async (request) => {
    const { id } = request.params as { id: string };
    const audit = { actor: (request.adminToken as AdminTokenRecord).name, action: 'webhooks.retry', target: id, requestId: request.id, detail: {} };
    if (!(await services.store.webhooks.retryDelivery(id, new Date(services.clock()).toISOString(), audit))) {
      throw new ApiError('DELIVERY_NOT_FOUND', `No webhook delivery has id "${id}".`);
    }
    return { id, state: 'pending' };
  });
}
