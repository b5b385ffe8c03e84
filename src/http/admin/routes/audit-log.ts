import type { FastifyInstance } from 'fastify';
import { auditCursorId } from '../../../admin/admin-store.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders, limitParameter, pageLimit } from '../schemas.js';

const schema = {
  summary: 'Every change an operator made, newest first',
  description: "Changes through this API (actor: the token's name) and through the command line (actor: cli).",
  operationId: 'adminAuditLog',
  tags: ['admin'],
  security: adminSecurity,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { limit: limitParameter, cursor: plainText({}) },
  },
  response: {
    200: {
      description: 'A page of entries and the cursor of the next one (null after the last).',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['entries', 'next_cursor'],
      properties: {
        entries: {
          type: 'array',
          items: {
            type: 'object',
            required: ['at', 'actor', 'action', 'target', 'request_id', 'detail'],
            properties: {
              at: { type: 'string', format: 'date-time' },
              actor: { type: 'string' },
              action: { type: 'string' },
              target: { type: ['string', 'null'] },
              request_id: { type: ['string', 'null'] },
              detail: { type: 'object', additionalProperties: true },
            },
          },
        },
        next_cursor: { type: ['string', 'null'] },
      },
    },
    ...adminErrorResponses,
  },
} as const;

export function auditLogRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/admin/audit-log', { schema, ...hooks }, async (request) => {
    const { limit, cursor } = request.query as { limit?: string; cursor?: string };
    if (cursor !== undefined && auditCursorId(cursor) === undefined)
      throw new ApiError('BAD_REQUEST', 'cursor is not one this API gave: pass next_cursor as it came.');
    const page = await services.store.admin.listAudit(pageLimit(limit), cursor ?? null);
    const entries = page.items.map((entry) => ({
      at: entry.at,
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      request_id: entry.requestId,
      detail: entry.detail,
    }));
    return { entries, next_cursor: page.nextCursor };
  });
}
