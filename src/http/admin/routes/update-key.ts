import type { FastifyInstance } from 'fastify';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import type { SpendCap } from '../../../billing/spend-caps.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminKeyOf, changedKey, keyLifeOf, keysFor } from '../keys.js';
import { adminKey, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, keyLifeProperties, pricesSchema } from '../schemas.js';

const schema = {
  summary: "Set a key's prices, low-balance mark, end or metadata",
  description:
    "prices: this key's credits per request by endpoint, over PRICES (endpoints left out cost what PRICES says); null returns the key to PRICES. " +
    'low_balance_threshold: the balance at or below which a debit sends credits.low; null returns it to LOW_BALANCE_THRESHOLD. ' +
    'expires_at and metadata: as on creation; a new end is announced again when it comes. ' +
    'Fields left out stay as they are. The instance that answers applies a change at once; every other instance within a second. ' +
    'A revoked key is not changed (409).',
  operationId: 'adminUpdateKey',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      prices: { ...pricesSchema, type: ['object', 'null'] },
      low_balance_threshold: { type: ['integer', 'null'], minimum: 0, maximum: MAX_BALANCE },
      ...keyLifeProperties,
    },
  },
  response: {
    200: { description: 'The key as it is now.', headers: adminSuccessHeaders, ...adminKey },
    404: errorResponse('No key has this id.'),
    409: errorResponse('The key is revoked, which is permanent: nothing about it changes.'),
    ...adminWriteErrorResponses,
  },
} as const;

export function updateKeyRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.patch('/admin/keys/:id', { schema, ...hooks }, async (request) => {
    const id = (request.params as { id: string }).id;
    const body = request.body as {
      prices?: Record<string, number> | null;
      low_balance_threshold?: number | null;
      expires_at?: string | null;
      metadata?: Record<string, unknown> | null;
      spend_caps?: SpendCap[] | null;
    };
    const life = keyLifeOf(body, services.clock());
    const change = await keysFor(services, request).updateSettings(id, {
      prices: body.prices,
      lowBalanceThreshold: body.low_balance_threshold,
      ...life,
    });
    return adminKeyOf(changedKey(services, change, id));
  });
}
