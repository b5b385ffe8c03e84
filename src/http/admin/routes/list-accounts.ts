import type { FastifyInstance } from 'fastify';
import { keyCursorPlace } from '../../../billing/ledger-rows.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminAccountOf } from '../accounts.js';
import { adminAccount, adminErrorResponses, adminSecurity, adminSuccessHeaders, limitParameter, pageLimit } from '../schemas.js';

const schema = {
  summary: 'List accounts, newest first',
  description: 'Find a customer by your own id with external_id.',
  operationId: 'adminListAccounts',
  tags: ['admin'],
  security: adminSecurity,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: limitParameter,
      cursor: plainText({ description: 'next_cursor of the previous page.' }),
      external_id: plainText({ minLength: 1, maxLength: 200, description: 'The account with this external_id.' }),
      name_contains: plainText({ minLength: 1, maxLength: 200, description: 'Accounts whose name contains this text, whatever its case.' }),
    },
  },
  response: {
    200: {
      description: 'A page of accounts and the cursor of the next one (null after the last).',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['accounts', 'next_cursor'],
      properties: { accounts: { type: 'array', items: adminAccount }, next_cursor: { type: ['string', 'null'] } },
    },
    ...adminErrorResponses,
  },
} as const;

export function listAccountsRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/admin/accounts', { schema, ...hooks }, async (request) => {
    const query = request.query as { limit?: string; cursor?: string; external_id?: string; name_contains?: string };
    if (query.cursor !== undefined && !keyCursorPlace(query.cursor))
      throw new ApiError('BAD_REQUEST', 'cursor is not one this API gave: pass next_cursor as it came.');
    const page = await services.store.ledger.listAccountsPage({
      limit: pageLimit(query.limit),
      cursor: query.cursor ?? null,
      externalId: query.external_id,
      nameContains: query.name_contains,
    });
    return { accounts: page.accounts.map(adminAccountOf), next_cursor: page.nextCursor };
  });
}
