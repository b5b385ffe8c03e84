import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams, plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { existingKey } from '../keys.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders, limitParameter, pageLimit } from '../schemas.js';

const CHARGE_CURSOR = /^[1-9][0-9]{0,15}$/;

const schema = {
  summary: "A key's charges, newest first",
  description: 'Each charged request: the endpoint, when, the status it ended with and the credits it cost.',
  operationId: 'adminKeyCharges',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { limit: limitParameter, cursor: plainText({ description: 'next_cursor of the previous page.' }) },
  },
  response: {
    200: {
      description: 'A page of charges and the cursor of the next one (null after the last).',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['charges', 'next_cursor'],
      properties: {
        charges: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'endpoint', 'at', 'status', 'credits'],
            properties: {
              id: { type: 'integer' },
              endpoint: { type: 'string' },
              at: { type: 'string', format: 'date-time' },
              status: { type: ['integer', 'null'], description: 'The HTTP status the request ended with; null while not known.' },
              credits: { type: 'integer' },
            },
          },
        },
        next_cursor: { type: ['string', 'null'] },
      },
    },
    404: errorResponse('No key has this id.'),
    ...adminErrorResponses,
  },
} as const;

/** GET /admin/keys/{id}/charges. */
export function keyChargesRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/admin/keys/:id/charges', { schema, ...hooks }, async (request) => {
    const { limit, cursor } = request.query as { limit?: string; cursor?: string };
    if (cursor !== undefined && !CHARGE_CURSOR.test(cursor))
      throw new ApiError('BAD_REQUEST', 'cursor is not one this API gave: pass next_cursor as it came.');
    const key = await existingKey(services.store, (request.params as { id: string }).id);
    const size = pageLimit(limit);
    const charges = await services.store.ledger.listCharges(key.id, size + 1, cursor === undefined ? undefined : Number(cursor));
    const page = charges.slice(0, size);
    return {
      charges: page.map((charge) => ({
        id: charge.id,
        endpoint: charge.endpoint,
        at: charge.at,
        status: charge.outcomeStatus,
        credits: charge.credits,
      })),
      next_cursor: charges.length > size ? String(page[page.length - 1]?.id) : null,
    };
  });
}
