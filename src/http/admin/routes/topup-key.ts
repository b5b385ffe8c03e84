import type { FastifyInstance } from 'fastify';
import type { TopUpOutcome } from '../../../billing/key-admin.js';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idempotencyKeyHeader, idParams, plainText, responseHeaders } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { idempotentChange } from '../idempotent-change.js';
import { keysFor } from '../keys.js';
import { adminSecurity, adminSuccessHeaders, adminWriteErrorResponses } from '../schemas.js';

/** A top-up's body, of a key or of an account. */
export const topUpBody = {
  type: 'object',
  required: ['credits'],
  additionalProperties: false,
  properties: {
    credits: { type: 'integer', minimum: 1, maximum: MAX_BALANCE },
    reference: plainText({ maxLength: 200, description: "Your billing system's reference, kept in the audit log." }),
    expires_at: {
      type: 'string',
      format: 'date-time',
      description:
        'When what is left of these credits leaves the balance (RFC 3339, later than now); absent: never. Credits that expire soonest are spent first.',
    },
  },
} as const;

const schema = {
  summary: 'Add credits to a key',
  description:
    'Send an Idempotency-Key and repeat it on retries: the same request is answered from the first one and grants nothing more, ' +
    'whichever admin token sends it; a different request with the same Idempotency-Key is 422. The grant, its audit entry and ' +
    'the kept answer commit together: a request that failed granted nothing, and its retry runs afresh.',
  operationId: 'adminTopUpKey',
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
    404: errorResponse('No key has this id.'),
    409: errorResponse('The key is revoked; or a request with this Idempotency-Key is still running.', responseHeaders.retryAfter),
    422: errorResponse('The balance would pass 10^12 credits; or this Idempotency-Key was used for a different request.'),
    ...adminWriteErrorResponses,
  },
} as const;

/** The answer to a top-up's outcome, or its refusal. */
function answerOf(id: string, credits: number, result: TopUpOutcome, now: number): { id: string; balance: number } | ApiError {
  switch (result.outcome) {
    case 'not-found':
      return new ApiError('KEY_NOT_FOUND', `No key has id "${id}".`);
    case 'revoked':
      return new ApiError('KEY_REVOKED');
    case 'over-limit':
      return new ApiError(
        'BALANCE_LIMIT',
        `Key ${id} holds ${result.key.balance} credits; adding ${credits} would pass ${MAX_BALANCE}. Nothing was added.`,
      );
    case 'expiry-past':
      return new ApiError('BAD_REQUEST', `expires_at must be later than now (${new Date(now).toISOString()}).`);
    case 'topped-up':
    case 'granted-before':
      return { id, balance: result.key.balance };
  }
}

export function topUpKeyRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.post('/admin/keys/:id/topup', { schema, ...hooks }, async (request, reply) => {
    const id = (request.params as { id: string }).id;
    const body = request.body as { credits: number; reference?: string; expires_at?: string };
    const now = services.clock();
    return idempotentChange<TopUpOutcome, { id: string; balance: number }>(
      services,
      request,
      reply,
      async (answering) => {
        const result = await keysFor(services, request).topUp(
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
