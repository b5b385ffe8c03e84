import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_BALANCE, type RefillChange } from '../../../billing/ledger.js';
import type { RefillRule } from '../../../billing/refills.js';
import { REFILL_INTERVALS, REFILL_MODES, type RefillPlan } from '../../../billing/refills.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idempotencyKeyHeader, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { idempotentChange } from '../idempotent-change.js';
import { keysFor } from '../keys.js';
import { adminSecurity, adminSuccessHeaders, adminWriteErrorResponses } from '../schemas.js';

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

export const refillAnswer = (description: string) =>
  ({
    description,
    headers: adminSuccessHeaders,
    type: 'object',
    required: ['id', 'balance', 'refill', 'granted'],
    properties: {
      id: { type: 'string' },
      balance: { type: 'integer' },
      refill: refillSchema,
      granted: {
        type: 'integer',
        description:
          "Credits this request granted: the plan's first period when it starts now, else 0. Less than the plan's credits when " +
          'the balance had room for only that much under 10^12.',
      },
    },
  }) as const;

export function refillOf(rule: RefillRule | null) {
  return rule && { credits: rule.credits, interval: rule.interval, mode: rule.mode, next_refill_at: rule.nextRefillAt };
}

export const refillBody = {
  type: 'object',
  required: ['credits', 'interval', 'mode'],
  additionalProperties: false,
  properties: {
    credits: { type: 'integer', minimum: 1, maximum: MAX_BALANCE },
    interval: { type: 'string', enum: [...REFILL_INTERVALS] },
    mode: { type: 'string', enum: [...REFILL_MODES], description: 'Always stated: there is no default.' },
  },
} as const;

const putSchema = {
  summary: "Set a key's refill plan",
  description:
    'Each period (day, week or calendar month) grants `credits` once; after downtime only the current period is granted. A ' +
    "key's first plan starts now and is granted at once. A plan set while a period its refills paid for is still running (a " +
    'change of plan, or one ended and set again) starts when that period ends: no period is ever granted twice, and setting a ' +
    'plan is never a top-up. Setting the plan the key already follows changes nothing. No refill lifts the balance past 10^12: ' +
    "it grants what fits. mode add: the plan's credits roll over. mode replace: a period's credits expire when the next period " +
    'starts, so each refill replaces what is left of the last one; credits bought by top-up are never touched. Send an ' +
    'Idempotency-Key to have a retry answered from the first request.',
  operationId: 'adminSetRefill',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  headers: { type: 'object', properties: { 'idempotency-key': idempotencyKeyHeader } },
  body: refillBody,
  response: {
    200: refillAnswer('The plan, what this request granted, and the balance after.'),
    404: errorResponse('No key has this id.'),
    409: errorResponse('The key is revoked, which is permanent; or a request with this Idempotency-Key is still running.'),
    422: errorResponse('This Idempotency-Key was used for a different request.'),
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
  headers: { type: 'object', properties: { 'idempotency-key': idempotencyKeyHeader } },
  response: {
    200: refillAnswer('The key has no plan now.'),
    404: errorResponse('No key has this id.'),
    409: errorResponse('A request with this Idempotency-Key is still running.'),
    422: errorResponse('This Idempotency-Key was used for a different request.'),
    ...adminWriteErrorResponses,
  },
} as const;

function answerOf(id: string, change: RefillChange) {
  if (change.outcome === 'not-found') return new ApiError('KEY_NOT_FOUND', `No key has id "${id}".`);
  if (change.outcome === 'revoked') return new ApiError('KEY_REVOKED');
  return { id, balance: change.balance, refill: refillOf(change.rule), granted: change.refill?.credits ?? 0 };
}

/** PUT and DELETE /admin/keys/{id}/refill. */
export function refillRoutes(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  const change = (request: FastifyRequest, reply: FastifyReply, plan: RefillPlan | null) => {
    const id = (request.params as { id: string }).id;
    return idempotentChange<RefillChange, ReturnType<typeof answerOf>>(
      services,
      request,
      reply,
      async (answering) => {
        const result = await keysFor(services, request).setRefill(id, plan, answering);
        if (result.outcome === 'set' && result.refill) services.metrics?.grant(result.refill.credits);
        return result;
      },
      (result) => answerOf(id, result),
    );
  };
  app.put('/admin/keys/:id/refill', { schema: putSchema, ...hooks }, (request, reply) => change(request, reply, request.body as RefillPlan));
  app.delete('/admin/keys/:id/refill', { schema: deleteSchema, ...hooks }, (request, reply) => change(request, reply, null));
}
