import type { FastifyInstance } from 'fastify';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import type { SpendCap } from '../../../billing/spend-caps.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { accountNotFound } from '../accounts.js';
import { adminKeyOf, keyLifeOf, keysFor } from '../keys.js';
import { adminKey, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, keyLifeProperties } from '../schemas.js';

const schema = {
  summary: 'Create an API key',
  description:
    'The plain key is in this answer only; it is stored hashed. Without account_id the key gets an account of its own holding ' +
    '`credits`; with it, the key joins that account and `credits` are granted to it.',
  operationId: 'adminCreateKey',
  tags: ['admin'],
  security: adminSecurity,
  body: {
    type: 'object',
    required: ['credits'],
    additionalProperties: false,
    properties: {
      credits: { type: 'integer', minimum: 0, maximum: MAX_BALANCE },
      name: plainText({ maxLength: 200 }),
      account_id: plainText({ minLength: 1, maxLength: 64, description: 'The account the key joins; absent: an account of its own.' }),
      rate: { type: ['number', 'null'], exclusiveMinimum: 0, description: "Requests per second; null or absent for the service's default." },
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
    404: errorResponse('No account has this account_id.'),
    422: errorResponse("The credits would take the account's balance past 10^12."),
    ...adminWriteErrorResponses,
  },
} as const;

export function createKeyRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.post('/admin/keys', { schema, ...hooks }, async (request, reply) => {
    const body = request.body as {
      credits: number;
      name?: string;
      account_id?: string;
      rate?: number | null;
      expires_at?: string | null;
      metadata?: Record<string, unknown> | null;
      spend_caps?: SpendCap[] | null;
    };
    const life = keyLifeOf(body, services.clock());
    const keys = keysFor(services, request);
    const created =
      body.account_id === undefined
        ? { outcome: 'created' as const, ...(await keys.create(body.credits, body.name ?? '', body.rate ?? null, life)) }
        : await keys.createInAccount(body.account_id, body.credits, body.name ?? '', body.rate ?? null, life);
    if (created.outcome === 'not-found') throw accountNotFound(body.account_id as string);
    if (created.outcome === 'over-limit')
      throw new ApiError(
        'BALANCE_LIMIT',
        `Account ${body.account_id} holds ${created.balance} credits; adding ${body.credits} would pass ${MAX_BALANCE}.`,
      );
    services.metrics?.grant(body.credits);
    return reply.code(201).send({ ...adminKeyOf(created.record), key: created.key });
  });
}
