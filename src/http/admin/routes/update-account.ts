import type { FastifyInstance } from 'fastify';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import type { SpendCap } from '../../../billing/spend-caps.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams, plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { accountLifeOf, accountNotFound, accountsFor, adminAccountOf, externalIdTaken, forgetAccountKeys } from '../accounts.js';
import { adminAccount, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, keyLifeProperties, pricesSchema } from '../schemas.js';
import { externalIdSchema } from './create-account.js';

const schema = {
  summary: "Set an account's name, external id, metadata, prices, low-balance mark or spend caps",
  description:
    'Fields left out stay as they are; null clears one. prices and low_balance_threshold are those every key of the account ' +
    'pays and reports by. The instance that answers applies a change at once; every other instance within a second.',
  operationId: 'adminUpdateAccount',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  body: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      name: plainText({ maxLength: 200 }),
      external_id: { ...externalIdSchema, type: ['string', 'null'] },
      metadata: keyLifeProperties.metadata,
      prices: { ...pricesSchema, type: ['object', 'null'] },
      low_balance_threshold: { type: ['integer', 'null'], minimum: 0, maximum: MAX_BALANCE },
      spend_caps: keyLifeProperties.spend_caps,
    },
  },
  response: {
    200: { description: 'The account as it is now.', headers: adminSuccessHeaders, ...adminAccount },
    404: errorResponse('No account has this id.'),
    409: errorResponse('Another account has this external_id.'),
    ...adminWriteErrorResponses,
  },
} as const;

interface UpdateBody {
  name?: string;
  external_id?: string | null;
  metadata?: Record<string, unknown> | null;
  prices?: Record<string, number> | null;
  low_balance_threshold?: number | null;
  spend_caps?: SpendCap[] | null;
}

export function updateAccountRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.patch('/admin/accounts/:id', { schema, ...hooks }, async (request) => {
    const id = (request.params as { id: string }).id;
    const body = request.body as UpdateBody;
    const result = await accountsFor(services, request).update(id, {
      name: body.name,
      externalId: body.external_id,
      prices: body.prices,
      lowBalanceThreshold: body.low_balance_threshold,
      ...accountLifeOf(body, services.clock()),
    });
    if (result.outcome === 'not-found') throw accountNotFound(id);
    if (result.outcome === 'external-id-taken') throw externalIdTaken(result.accountId);
    await forgetAccountKeys(services, id);
    return adminAccountOf(result.account);
  });
}
