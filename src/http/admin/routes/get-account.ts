import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../services/services.js';
import { errorResponse, expiringSchema, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminAccountOf, existingAccount } from '../accounts.js';
import { adminKeyOf } from '../keys.js';
import { adminAccount, adminErrorResponses, adminKey, adminSecurity, adminSuccessHeaders } from '../schemas.js';
import { capSpendSchema, capSpendView } from './get-key.js';
import { refillOf, refillSchema } from './refill.js';

/** The earliest and latest times either store accepts: all of an account's charges. */
const ALL_TIME = { from: '1970-01-01T00:00:00.000Z', to: '9999-12-31T23:59:59.999Z' };

const schema = {
  summary: 'One account, with its keys and use',
  description:
    'The account, its keys (never the plain keys), its refill plan, expiring credits, spend caps with what each period spent, and its charges by endpoint.',
  operationId: 'adminGetAccount',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  response: {
    200: {
      description: 'The account and everything about it.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: [...adminAccount.required, 'keys', 'refill', 'expiring', 'cap_spend', 'totals_by_endpoint'],
      properties: {
        ...adminAccount.properties,
        keys: { type: 'array', items: adminKey, description: 'Oldest first.' },
        refill: refillSchema,
        expiring: expiringSchema,
        cap_spend: capSpendSchema,
        totals_by_endpoint: {
          type: 'object',
          description: "Charges and credits spent by all the account's keys on each endpoint, ever.",
          additionalProperties: {
            type: 'object',
            required: ['charges', 'credits'],
            properties: { charges: { type: 'integer' }, credits: { type: 'integer' } },
          },
        },
      },
    },
    404: errorResponse('No account has this id.'),
    ...adminErrorResponses,
  },
} as const;

export function getAccountRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/admin/accounts/:id', { schema, ...hooks }, async (request) => {
    const account = await existingAccount(services.store, (request.params as { id: string }).id);
    const { ledger } = services.store;
    const [keys, refill, expiring, capSpend, usage] = await Promise.all([
      ledger.accountKeys(account.id),
      ledger.refillRule(account.id),
      ledger.expiringCredits(account.id),
      ledger.capSpend(account.id, account.spendCaps ?? [], services.clock()),
      ledger.accountUsage(account.id, ALL_TIME.from, ALL_TIME.to),
    ]);
    const totals: Record<string, { charges: number; credits: number }> = {};
    for (const row of usage) {
      const total = totals[row.endpoint] ?? { charges: 0, credits: 0 };
      totals[row.endpoint] = { charges: total.charges + row.charges, credits: total.credits + row.credits };
    }
    return {
      ...adminAccountOf(account),
      keys: keys.map(adminKeyOf),
      refill: refillOf(refill),
      expiring,
      cap_spend: capSpendView(capSpend),
      totals_by_endpoint: totals,
    };
  });
}
