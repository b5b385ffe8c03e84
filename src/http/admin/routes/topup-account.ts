import type { FastifyInstance } from 'fastify';
import type { AccountTopUpOutcome } from '../../../billing/account-admin.js';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idempotencyKeyHeader, idParams, responseHeaders } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { accountNotFound, accountsFor } from '../accounts.js';
import { idempotentChange } from '../idempotent-change.js';
import { adminSecurity, adminSuccessHeaders, adminWriteErrorResponses } from '../schemas.js';
import { topUpBody } from './topup-key.js';

const schema = {
  summary: 'Add credits to an account',
  description:
    'The same rules as a key top-up: send an Idempotency-Key and repeat it on retries, and the grant is made once; the grant, ' +
    'its audit entry and the kept answer commit together.',
  operationId: 'adminTopUpAccount',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  headers: { type: 'object', properties: { 'idempotency-key': idempotencyKeyHeader } },
  body: topUpBody,
  response: {
    200: {
      description: 'The balance after the grant.',
      headers: { ...adminSuccessHeaders, 'idempotent-replayed': responseHeaders.charged['idempotent-replayed'] },
      type: 'object',
      required: ['id', 'balance'],
      properties: { id: { type: 'string' }, balance: { type: 'integer' } },
    },
    404: errorResponse('No account has this id.'),
    409: errorResponse('A request with this Idempotency-Key is still running.', responseHeaders.retryAfter),
    422: errorResponse('The balance would pass 10^12 credits; or this Idempotency-Key was used for a different request.'),
    ...adminWriteErrorResponses,
  },
} as const;

function answerOf(id: string, credits: number, result: AccountTopUpOutcome, now: number): { id: string; balance: number } | ApiError {
  switch (result.outcome) {
    case 'not-found':
      return accountNotFound(id);
    case 'over-limit':
      return new ApiError(
        'BALANCE_LIMIT',
        `Account ${id} holds ${result.account.balance} credits; adding ${credits} would pass ${MAX_BALANCE}. Nothing was added.`,
      );
    case 'expiry-past':
      return new ApiError('BAD_REQUEST', `expires_at must be later than now (${new Date(now).toISOString()}).`);
    case 'topped-up':
    case 'granted-before':
      return { id, balance: result.account.balance };
  }
}

export function topUpAccountRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.post('/admin/accounts/:id/topup', { schema, ...hooks }, async (request, reply) => {
    const id = (request.params as { id: string }).id;
    const body = request.body as { credits: number; reference?: string; expires_at?: string };
    const now = services.clock();
    return idempotentChange<AccountTopUpOutcome, { id: string; balance: number }>(
      services,
      request,
      reply,
      async (answering) => {
        const result = await accountsFor(services, request).topUp(
          id,
          body.credits,
          { reference: body.reference, idempotencyRef: answering?.entry.ref, expiresAt: body.expires_at },
          answering,
        );
        if (result.outcome === 'topped-up') services.metrics?.grant(body.credits);
        return result;
      },
      (result) => answerOf(id, body.credits, result, now),
    );
  });
}
