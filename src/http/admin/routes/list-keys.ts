import type { FastifyInstance } from 'fastify';
import { keyCursorPlace } from '../../../billing/ledger-rows.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminKeyOf } from '../keys.js';
import { adminErrorResponses, adminKey, adminSecurity, adminSuccessHeaders, limitParameter, pageLimit } from '../schemas.js';

const schema = {
  summary: 'List API keys, newest first',
  description: 'Never the plain keys. Keys created in the same millisecond come in descending id order.',
  operationId: 'adminListKeys',
  tags: ['admin'],
  security: adminSecurity,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: limitParameter,
      cursor: plainText({ description: 'next_cursor of the previous page.' }),
      status: { type: 'string', enum: ['active', 'disabled', 'revoked'] },
      name: plainText({ description: 'Keys with exactly this name.' }),
      name_contains: plainText({ minLength: 1, maxLength: 200, description: 'Keys whose name contains this text, whatever its case.' }),
      max_balance: { type: 'string', pattern: '^[0-9]{1,15}$', description: 'Keys with at most this many credits.' },
    },
  },
  response: {
    200: {
      description: 'A page of keys (never the plain keys) and the cursor of the next one (null after the last).',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['keys', 'next_cursor'],
      properties: { keys: { type: 'array', items: adminKey }, next_cursor: { type: ['string', 'null'] } },
    },
    ...adminErrorResponses,
  },
} as const;

interface ListQuery {
  limit?: string;
  cursor?: string;
  status?: 'active' | 'disabled' | 'revoked';
  name?: string;
  name_contains?: string;
  max_balance?: string;
}

export function listKeysRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/admin/keys', { schema, ...hooks }, async (request) => {
    const query = request.query as ListQuery;
    if (query.cursor !== undefined && !keyCursorPlace(query.cursor))
      throw new ApiError('BAD_REQUEST', 'cursor is not one this API gave: pass next_cursor as it came.');
    const page = await services.store.ledger.listKeysPage({
      limit: pageLimit(query.limit),
      cursor: query.cursor ?? null,
      status: query.status,
      name: query.name,
      nameContains: query.name_contains,
      maxBalance: query.max_balance === undefined ? undefined : Number(query.max_balance),
    });
    return { keys: page.keys.map(adminKeyOf), next_cursor: page.nextCursor };
  });
}
