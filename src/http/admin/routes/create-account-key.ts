import type { FastifyInstance } from 'fastify';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import type { SpendCap } from '../../../billing/spend-caps.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams, plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { accountNotFound } from '../accounts.js';
import { adminKeyOf, keyLifeOf, keysFor } from '../keys.js';
import { adminKey, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, keyLifeProperties } from '../schemas.js';

const schema = {
  summary: 'Create a key of an account',
  description: "The key spends the account's balance. The plain key is in this answer only; it is stored hashed.",
  operationId: 'adminCreateAccountKey',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: plainText({ maxLength: 200 }),
      rate: { type: ['number', 'null'], exclusiveMinimum: 0, description: "Requests per second; null or absent for the service's default." },
      credits: { type: 'integer', minimum: 0, maximum: MAX_BALANCE, description: 'Granted to the account with the key; absent: 0.' },
      ...keyLifeProperties,
    },
  },
  response: {
    201: {
      description: 'The new key.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: [...adminKey.required, 'key'],
      properties: { ...adminKey.properties, key: { type: 'string', description: 'The plain key: 64 hexadecimal characters, shown once.' } },
    },
    404: errorResponse('No account has this id.'),
    422: errorResponse("The credits would take the account's balance past 10^12."),
    ...adminWriteErrorResponses,
  },
} as const;

export function createAccountKeyRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.post('/admin/accounts/:id/keys', { schema, ...hooks }, async (request, reply) => {
    const accountId = (request.params as { id: string }).id;
    const body = (request.body ?? {}) as {
      name?: string;
      rate?: number | null;
      credits?: number;
      expires_at?: string | null;
      metadata?: Record<string, unknown> | null;
      spend_caps?: SpendCap[] | null;
    };
    const life = keyLifeOf(body, services.clock());
    const created = await keysFor(services, request).createInAccount(accountId, body.credits ?? 0, body.name ?? '', body.rate ?? null, life);
    if (created.outcome === 'not-found') throw accountNotFound(accountId);
    if (created.outcome === 'over-limit')
      throw new ApiError('BALANCE_LIMIT', `Account ${accountId} holds ${created.balance} credits; adding ${body.credits} would pass ${MAX_BALANCE}.`);
    if (body.credits) services.metrics?.grant(body.credits);
    return reply.code(201).send({ ...adminKeyOf(created.record), key: created.key });
  });
}
