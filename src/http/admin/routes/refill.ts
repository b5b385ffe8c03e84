import type { FastifyInstance } from 'fastify';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import type { RefillRule } from '../../../billing/refills.js';
import { REFILL_INTERVALS, REFILL_MODES, type RefillPlan } from '../../../billing/refills.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import type { KeyedHooks } from '../../keyed/step.js';
import { errorResponse } from '../../schemas/common.js';
import { keysFor } from '../keys.js';
import { adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, idParams } from '../schemas.js';

/** A refill plan as the admin API shows it; null when the key has none. */
export const refillSchema = {
  type: ['object', 'null'],
  required: ['credits', 'interval', 'mode', 'next_refill_at'],
  properties: {
    credits: { type: 'integer' },
    interval: { type: 'string', enum: [...REFILL_INTERVALS] },
    mode: { type: 'string', enum: [...REFILL_MODES] },
    next_refill_at: { type: 'string', format: 'date-time' },
  },
} as const;

const refillAnswer = (description: string) =>
  ({
    description,
    headers: adminSuccessHeaders,
    type: 'object',
    required: ['id', 'balance', 'refill'],
    properties: { id: { type: 'string' }, balance: { type: 'integer' }, refill: refillSchema },
  }) as const;

export function refillOf(rule: RefillRule | null) {
  return rule && { credits: rule.credits, interval: rule.interval, mode: rule.mode, next_refill_at: rule.nextRefillAt };
}

const putSchema = {
  summary: "Set a key's refill plan",
  description:
    'Each period (day, week or calendar month, from now) grants `credits` once, the first at once; after downtime only the current ' +
    "period is granted. mode add: the plan's credits roll over. mode replace: a period's credits expire when the next period " +
    'starts, so each refill replaces what is left of the last one; credits bought by top-up are never touched. Setting a plan ' +
    'again starts it anew.',
  operationId: 'adminSetRefill',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  body: {
    type: 'object',
    required: ['credits', 'interval', 'mode'],
    additionalProperties: false,
    properties: {
      credits: { type: 'integer', minimum: 1, maximum: MAX_BALANCE },
      interval: { type: 'string', enum: [...REFILL_INTERVALS] },
      mode: { type: 'string', enum: [...REFILL_MODES], description: 'Always stated: there is no default.' },
    },
  },
  response: {
    200: refillAnswer('The plan, and the balance after its first refill.'),
    404: errorResponse('No key has this id.'),
    409: errorResponse('The key is revoked, which is permanent.'),
    ...adminWriteErrorResponses,
  },
} as const;

const deleteSchema = {
  summary: "End a key's refill plan",
  description: "Credits already granted stay (a replace plan's last credits still expire at the end of their period).",
  operationId: 'adminDeleteRefill',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  response: {
    200: refillAnswer('The key has no plan now.'),
    404: errorResponse('No key has this id.'),
    ...adminWriteErrorResponses,
  },
} as const;

/** PUT and DELETE /admin/keys/{id}/refill. */
export function refillRoutes(app: FastifyInstance, services: Services, hooks: KeyedHooks): void {
  const change = async (id: string, keys: ReturnType<typeof keysFor>, plan: RefillPlan | null) => {
    const result = await keys.setRefill(id, plan);
    if (result.outcome === 'not-found') throw new ApiError('KEY_NOT_FOUND', `No key has id "${id}".`);
    if (result.outcome === 'revoked') throw new ApiError('KEY_REVOKED');
    const key = await services.store.ledger.findKeyById(id);
    return { id, balance: key?.balance ?? 0, refill: refillOf(result.rule) };
  };
  app.put('/admin/keys/:id/refill', { schema: putSchema, ...hooks }, async (request) =>
    change((request.params as { id: string }).id, keysFor(services, request), request.body as RefillPlan),
  );
  app.delete('/admin/keys/:id/refill', { schema: deleteSchema, ...hooks }, async (request) =>
    change((request.params as { id: string }).id, keysFor(services, request), null),
  );
}
