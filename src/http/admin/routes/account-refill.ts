import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountRefillChange } from '../../../billing/ledger.js';
import type { RefillPlan } from '../../../billing/refills.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idempotencyKeyHeader, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { accountNotFound, accountsFor } from '../accounts.js';
import { idempotentChange } from '../idempotent-change.js';
import { adminSecurity, adminWriteErrorResponses } from '../schemas.js';
import { refillAnswer, refillBody, refillOf } from './refill.js';

const common = {
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  headers: { type: 'object', properties: { 'idempotency-key': idempotencyKeyHeader } },
} as const;

const putSchema = {
  ...common,
  summary: "Set an account's refill plan",
  description:
    "The rules of a key's refill plan (PUT /admin/keys/{id}/refill), which is its account's. Send an Idempotency-Key to have a retry answered from the first request.",
  operationId: 'adminSetAccountRefill',
  body: refillBody,
  response: {
    200: refillAnswer('The plan, what this request granted, and the balance after.'),
    404: errorResponse('No account has this id.'),
    409: errorResponse('A request with this Idempotency-Key is still running.'),
    422: errorResponse('This Idempotency-Key was used for a different request.'),
    ...adminWriteErrorResponses,
  },
} as const;

const deleteSchema = {
  ...common,
  summary: "End an account's refill plan",
  description: "Credits already granted stay (a replace plan's last credits still expire at the end of their period).",
  operationId: 'adminDeleteAccountRefill',
  response: {
    200: refillAnswer('The account has no plan now.'),
    404: errorResponse('No account has this id.'),
    409: errorResponse('A request with this Idempotency-Key is still running.'),
    422: errorResponse('This Idempotency-Key was used for a different request.'),
    ...adminWriteErrorResponses,
  },
} as const;

function answerOf(id: string, change: AccountRefillChange) {
  if (change.outcome === 'not-found') return accountNotFound(id);
  return { id, balance: change.balance, refill: refillOf(change.rule), granted: change.refill?.credits ?? 0 };
}

/** PUT and DELETE /admin/accounts/{id}/refill. */
export function accountRefillRoutes(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  const change = (request: FastifyRequest, reply: FastifyReply, plan: RefillPlan | null) => {
    const id = (request.params as { id: string }).id;
    return idempotentChange<AccountRefillChange, ReturnType<typeof answerOf>>(
      services,
      request,
      reply,
      async (answering) => {
        const result = await accountsFor(services, request).setRefill(id, plan, answering);
        if (result.outcome === 'set' && result.refill) services.metrics?.grant(result.refill.credits);
        return result;
      },
      (result) => answerOf(id, result),
    );
  };
  app.put('/admin/accounts/:id/refill', { schema: putSchema, ...hooks }, (request, reply) => change(request, reply, request.body as RefillPlan));
  app.delete('/admin/accounts/:id/refill', { schema: deleteSchema, ...hooks }, (request, reply) => change(request, reply, null));
}
