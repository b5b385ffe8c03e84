import type { FastifyInstance } from 'fastify';
import type { SpendCap } from '../../../billing/spend-caps.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, expiringSchema, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminKeyOf, existingKey } from '../keys.js';
import { adminErrorResponses, adminKey, adminSecurity, adminSuccessHeaders } from '../schemas.js';
import { refillOf, refillSchema } from './refill.js';

const LATEST_GRANTS = 50;

export const capSpendSchema = {
  type: 'array',
  description: "Each spend cap's current period: what it has spent, and when it resets. Empty without caps.",
  items: {
    type: 'object',
    required: ['credits', 'interval', 'spent', 'resets_at'],
    properties: {
      credits: { type: 'integer' },
      interval: { type: 'string', enum: ['day', 'week', 'month'] },
      spent: { type: 'integer' },
      resets_at: { type: 'string', format: 'date-time' },
    },
  },
} as const;

export function capSpendView(periods: Array<{ cap: SpendCap; spent: number; resetsAt: string }>) {
  return periods.map((period) => ({ ...period.cap, spent: period.spent, resets_at: period.resetsAt }));
}

const schema = {
  summary: 'One API key, with its use',
  description: 'The key, when it was last charged, and how many charges it paid on each endpoint.',
  operationId: 'adminGetKey',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  response: {
    200: {
      description: 'The key, when it was last charged, its charges by endpoint, its latest grants and its credits that expire.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: [...adminKey.required, 'last_used_at', 'charges_by_endpoint', 'grants', 'expiring', 'refill', 'cap_spend'],
      properties: {
        ...adminKey.properties,
        last_used_at: { type: ['string', 'null'], format: 'date-time' },
        charges_by_endpoint: { type: 'object', additionalProperties: { type: 'integer' } },
        grants: {
          type: 'array',
          description: `The latest ${LATEST_GRANTS} grants, newest first.`,
          items: {
            type: 'object',
            required: ['credits', 'reason', 'at', 'expires_at'],
            properties: {
              credits: { type: 'integer' },
              reason: { type: 'string', enum: ['create', 'topup', 'refill'] },
              at: { type: 'string', format: 'date-time' },
              expires_at: { type: ['string', 'null'], format: 'date-time' },
            },
          },
        },
        refill: refillSchema,
        expiring: expiringSchema,
        cap_spend: capSpendSchema,
      },
    },
    404: errorResponse('No key has this id.'),
    ...adminErrorResponses,
  },
} as const;

export function getKeyRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/admin/keys/:id', { schema, ...hooks }, async (request) => {
    const key = await existingKey(services.store, (request.params as { id: string }).id);
    const { ledger } = services.store;
    const [activity, grants, expiring, refill, capSpend] = await Promise.all([
      ledger.keyActivity(key.id),
      ledger.listGrants(key.accountId),
      ledger.expiringCredits(key.accountId),
      ledger.refillRule(key.accountId),
      ledger.capSpend(key.id, key.spendCaps ?? [], services.clock()),
    ]);
    return {
      ...adminKeyOf(key),
      last_used_at: activity.lastUsedAt,
      charges_by_endpoint: activity.chargesByEndpoint,
      grants: grants
        .slice(-LATEST_GRANTS)
        .reverse()
        .map((grant) => ({ credits: grant.amount, reason: grant.reason, at: grant.at, expires_at: grant.expiresAt })),
      expiring,
      refill: refillOf(refill),
      cap_spend: capSpendView(capSpend),
    };
  });
}
