import type { FastifyInstance } from 'fastify';
import type { AppSettings, Services } from '../../services/services.js';
import { ASK_THE_OPERATOR, noCredits, purchaseUrlFor } from '../keyed/refusals.js';
import { expiringSchema, keyedErrorResponses, keyedHeaders, responseHeaders, security, successHeaders } from '../schemas/common.js';
import type { RouteHooks } from '../steps.js';

const balance = { type: ['integer', 'null'], description: 'Remaining credits; null when the key is not valid.' } as const;

const schema = {
  summary: 'Credit balance (free)',
  description: 'Reads the balance of the calling key without spending a credit. At zero it answers 402 with current_balance 0.',
  operationId: 'getCredits',
  tags: ['keyed'],
  security,
  headers: keyedHeaders,
  response: {
    200: {
      description: 'The balance.',
      headers: successHeaders('keyed'),
      type: 'object',
      required: ['status', 'message', 'current_balance'],
      properties: {
        status: { type: 'integer' },
        message: { type: 'string' },
        current_balance: balance,
        expiring: { ...expiringSchema, description: `Present only when some of the balance expires. ${expiringSchema.description}` },
      },
    },
    ...keyedErrorResponses,
    402: {
      description: 'The balance is zero.',
      headers: { ...responseHeaders.requestId, ...responseHeaders.rateLimit },
      type: 'object',
      required: ['status', 'message', 'current_balance'],
      properties: {
        status: { type: 'integer' },
        message: { type: 'string' },
        current_balance: balance,
        purchase_url: { type: 'string', description: 'Where to buy credits, when the operator has set one (CREDITS_PURCHASE_URL).' },
      },
    },
  },
} as const;

export function creditsRoute(app: FastifyInstance, services: Services, settings: Pick<AppSettings, 'purchaseUrl'>, hooks: RouteHooks): void {
  app.get('/credits', { schema, config: { authErrorExtra: { current_balance: null } }, ...hooks }, async (request) => {
    const { key } = request.caller!;
    const balanceNow = key.balance;
    if (balanceNow === 0) {
      throw noCredits(purchaseUrlFor(settings.purchaseUrl, key.accountId), `The balance is 0 credits.${ASK_THE_OPERATOR}`, { current_balance: 0 });
    }
    const answer = { status: 200, message: `${balanceNow} credits remaining.`, current_balance: balanceNow };
    // Read only for keys that have expiring grants: most have none, and /credits is a hot route.
    const expiring = key.expiringGrants > 0 ? await services.store.ledger.expiringCredits(key.accountId) : [];
    return expiring.length > 0 ? { ...answer, expiring } : answer;
  });
}
