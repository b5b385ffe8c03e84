import type { FastifyInstance } from 'fastify';
import { ADMIN_SCOPES } from '../../../admin/admin-scopes.js';
import type { RouteHooks } from '../../steps.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders } from '../schemas.js';

const schema = {
  summary: 'The admin token this request carries',
  description:
    'Its id, name, scopes and whether it is read-only (no scope that changes anything): how a client (the console) learns what ' +
    'it may do. Each admin route needs one scope, named in its 403.',
  operationId: 'adminCurrentToken',
  tags: ['admin'],
  security: adminSecurity,
  response: {
    200: {
      description: 'The token (never its secret).',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['id', 'name', 'read_only', 'scopes'],
      properties: {
        id: { type: 'string' },
        name: { type: 'string' },
        read_only: { type: 'boolean' },
        scopes: { type: 'array', items: { type: 'string', enum: [...ADMIN_SCOPES] } },
      },
    },
    ...adminErrorResponses,
  },
} as const;

/** GET /admin/token. */
export function currentTokenRoute(app: FastifyInstance, hooks: RouteHooks): void {
  app.get('/admin/token', { schema, ...hooks }, async (request) => {
    const token = request.adminToken;
    return { id: token?.id ?? '', name: token?.name ?? '', read_only: token?.readOnly ?? true, scopes: token?.scopes ?? [] };
  });
}
