import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AdminTokenRecord } from '../../../admin/admin-store.js';
import { EVENT_TYPES, type EventType } from '../../../billing/events.js';
import { ApiError } from '../../../errors.js';
import type { AppSettings, Services } from '../../../services/services.js';
import { newWebhookSecret } from '../../../webhooks/signature.js';
import type { WebhookEndpoint } from '../../../webhooks/webhook-store.js';
import { webhookUrlProblem } from '../../../webhooks/webhook-url.js';
import { errorResponse, idParams, plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, deletedResponse } from '../schemas.js';

const eventsSchema = {
  type: ['array', 'null'],
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: [...EVENT_TYPES] },
  description: 'The event types sent there; null or absent: all of them.',
} as const;

const endpointSchema = {
  type: 'object',
  required: ['id', 'url', 'events', 'created_at'],
  properties: { id: { type: 'string' }, url: { type: 'string' }, events: eventsSchema, created_at: { type: 'string', format: 'date-time' } },
} as const;

const createSchema = {
  summary: 'Add a webhook endpoint',
  description:
    'Events are POSTed there signed as Standard Webhooks specifies, with the secret in this answer (shown only here). ' +
    'The URL is yours: private and loopback addresses are allowed; link-local and cloud-metadata addresses (169.254.0.0/16, ' +
    'fe80::/10, metadata.google.internal and the like) are refused, also when a name resolves to one at delivery, unless ' +
    'WEBHOOK_ALLOW_LINK_LOCAL=true. A URL holding a user name or password is refused.',
  operationId: 'adminCreateWebhook',
  tags: ['admin'],
  security: adminSecurity,
  body: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: { url: plainText({ maxLength: 2000, description: 'http or https, without credentials.' }), events: eventsSchema },
  },
  response: {
    201: {
      description: 'The endpoint, with its secret.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: [...endpointSchema.required, 'secret'],
      properties: { ...endpointSchema.properties, secret: { type: 'string', description: 'whsec_ and base64: verify signatures with it.' } },
    },
    ...adminWriteErrorResponses,
  },
} as const;

const listSchema = {
  summary: 'The webhook endpoints',
  description: 'Never their secrets. WEBHOOK_URL, when set, is the endpoint whep_env.',
  operationId: 'adminListWebhooks',
  tags: ['admin'],
  security: adminSecurity,
  response: {
    200: {
      description: 'Every endpoint, oldest first.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['webhooks'],
      properties: { webhooks: { type: 'array', items: endpointSchema } },
    },
    ...adminErrorResponses,
  },
} as const;

const deleteSchema = {
  summary: 'Delete a webhook endpoint',
  description: 'Its pending deliveries fail at their next attempt; its delivery history stays.',
  operationId: 'adminDeleteWebhook',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  response: {
    200: deletedResponse,
    404: errorResponse('No endpoint has this id.'),
    ...adminWriteErrorResponses,
  },
} as const;

const shown = (endpoint: WebhookEndpoint) => ({ id: endpoint.id, url: endpoint.url, events: endpoint.events, created_at: endpoint.createdAt });

/** POST, GET /admin/webhooks and DELETE /admin/webhooks/{id}: where events are sent. */
export function webhookRoutes(app: FastifyInstance, services: Services, settings: AppSettings, read: RouteHooks, write: RouteHooks): void {
  const audit = (request: { adminToken: unknown; id: string }, action: string, target: string, detail: Record<string, unknown>) => ({
    actor: (request.adminToken as AdminTokenRecord).name,
    action,
    target,
    requestId: request.id,
    detail,
  });
  app.post('/admin/webhooks', { schema: createSchema, ...write }, async (request, reply) => {
    const body = request.body as { url: string; events?: EventType[] | null };
    const problem = webhookUrlProblem(body.url, settings.webhookAllowLinkLocal);
    if (problem) throw new ApiError('BAD_REQUEST', `${problem}. Nothing was created.`);
    const endpoint = {
      id: `whep_${randomBytes(8).toString('hex')}`,
      url: body.url,
      secret: newWebhookSecret(),
      events: body.events ?? null,
      createdAt: new Date(services.clock()).toISOString(),
    };
    await services.store.webhooks.createEndpoint(
      endpoint,
      audit(request, 'webhooks.create', endpoint.id, { url: endpoint.url, events: endpoint.events }),
    );
    return reply.code(201).send({ ...shown(endpoint), secret: endpoint.secret });
  });
  app.get('/admin/webhooks', { schema: listSchema, ...read }, async () => ({
    webhooks: (await services.store.webhooks.listEndpoints()).map(shown),
  }));
  app.delete('/admin/webhooks/:id', { schema: deleteSchema, ...write }, async (request) => {
    const { id } = request.params as { id: string };
    if (!(await services.store.webhooks.deleteEndpoint(id, audit(request, 'webhooks.delete', id, {})))) {
      throw new ApiError('WEBHOOK_NOT_FOUND', `No webhook endpoint has id "${id}".`);
    }
    return { deleted: id };
  });
}
