import type { FastifyInstance } from 'fastify';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import type { SpendCap } from '../../../billing/spend-caps.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { accountLifeOf, accountsFor, adminAccountOf, externalIdTaken } from '../accounts.js';
import { adminAccount, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, keyLifeProperties } from '../schemas.js';

export const externalIdSchema = plainText({
  minLength: 1,
  maxLength: 200,
  description: "Your own id for this customer (your billing system's), unique among accounts.",
});

const schema = {
  summary: 'Create an account',
  description:
    'An account owns keys and one balance: every key of it spends from the balance, and /credits with any of them shows it. ' +
    'Grants, expiring credits, the refill plan, prices, the low-balance mark and spend caps belong to the account. Add keys ' +
    'with POST /admin/accounts/{id}/keys.',
  operationId: 'adminCreateAccount',
  tags: ['admin'],
  security: adminSecurity,
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: plainText({ maxLength: 200 }),
      external_id: externalIdSchema,
      metadata: { ...keyLifeProperties.metadata, description: 'Your own data about the account: a JSON object of at most 4096 bytes.' },
      credits: { type: 'integer', minimum: 0, maximum: MAX_BALANCE, description: 'The opening balance; absent: 0.' },
      spend_caps: {
        ...keyLifeProperties.spend_caps,
        description: `Over all the account's keys together. ${keyLifeProperties.spend_caps.description}`,
      },
    },
  },
  response: {
    201: { description: 'The new account.', headers: adminSuccessHeaders, ...adminAccount },
    409: errorResponse('Another account has this external_id.'),
    ...adminWriteErrorResponses,
  },
} as const;

export function createAccountRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.post('/admin/accounts', { schema, ...hooks }, async (request, reply) => {
    const body = request.body as {
      name: string;
      external_id?: string;
      metadata?: Record<string, unknown> | null;
      credits?: number;
      spend_caps?: SpendCap[] | null;
    };
    const life = accountLifeOf(body, services.clock());
    const result = await accountsFor(services, request).create({ name: body.name, externalId: body.external_id, credits: body.credits, ...life });
    if (result.outcome === 'external-id-taken') throw externalIdTaken(result.accountId);
    if (body.credits) services.metrics?.grant(body.credits);
    return reply.code(201).send(adminAccountOf(result.account));
  });
}
