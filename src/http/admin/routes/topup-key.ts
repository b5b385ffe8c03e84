import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AdminTokenRecord } from '../../../admin/admin-store.js';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import { ApiError } from '../../../errors.js';
import type { Claim } from '../../../idempotency/idempotency-service.js';
import type { Services } from '../../../services/services.js';
import type { KeyedHooks } from '../../keyed/step.js';
import { errorResponse, idempotencyKeyHeader, responseHeaders } from '../../schemas/common.js';
import { keysFor } from '../keys.js';
import { adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, idParams } from '../schemas.js';

const schema = {
  summary: 'Add credits to a key',
  description:
    'Send an Idempotency-Key and repeat it on retries: the same request is answered from the first one and grants nothing more; ' +
    'a different request with the same Idempotency-Key is 422.',
  operationId: 'adminTopUpKey',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  headers: { type: 'object', properties: { 'idempotency-key': idempotencyKeyHeader } },
  body: {
    type: 'object',
    required: ['credits'],
    additionalProperties: false,
    properties: {
      credits: { type: 'integer', minimum: 1, maximum: MAX_BALANCE },
      reference: { type: 'string', maxLength: 200, description: "Your billing system's reference, kept in the audit log." },
      expires_at: {
        type: 'string',
        format: 'date-time',
        description:
          'When what is left of these credits leaves the balance (RFC 3339, later than now); absent: never. Credits that expire soonest are spent first.',
      },
    },
  },
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

/** Claims the Idempotency-Key for this token; answers a replay, 409 or 422 itself. Undefined when no key was sent. */
async function claimTopUp(services: Services, request: FastifyRequest, reply: FastifyReply): Promise<Claim | 'answered' | undefined> {
  const idempotencyKey = request.headers['idempotency-key'];
  if (typeof idempotencyKey !== 'string') return undefined;
  const keyHash = `admin:${(request.adminToken as AdminTokenRecord).id}`;
  const claim = await services.idempotency.claim(keyHash, idempotencyKey, {
    method: request.method,
    path: request.routeOptions.url ?? request.url,
    docId: (request.params as { id: string }).id,
    body: request.body,
  });
  switch (claim.outcome) {
    case 'mismatch':
      throw new ApiError('IDEMPOTENCY_KEY_REUSED');
    case 'in-progress':
      throw new ApiError('IDEMPOTENCY_IN_PROGRESS', undefined, { headers: { 'retry-after': '1' } });
    case 'replay':
      services.metrics?.replay();
      await reply.code(claim.response.status).type(claim.response.contentType).header('idempotent-replayed', 'true').send(claim.response.body);
      return 'answered';
    case 'claimed':
      return { keyHash, idempotencyKey, ref: claim.ref };
  }
}

async function topUp(services: Services, request: FastifyRequest, claim: Claim | undefined): Promise<{ id: string; balance: number }> {
  const id = (request.params as { id: string }).id;
  const body = request.body as { credits: number; reference?: string; expires_at?: string };
  const result = await keysFor(services, request).topUp(id, body.credits, {
    reference: body.reference,
    idempotencyRef: claim?.ref,
    expiresAt: body.expires_at,
  });
  switch (result.outcome) {
    case 'not-found':
      throw new ApiError('KEY_NOT_FOUND', `No key has id "${id}".`);
    case 'revoked':
      throw new ApiError('KEY_REVOKED');
    case 'over-limit':
      throw new ApiError(
        'BALANCE_LIMIT',
        `Key ${id} holds ${result.key.balance} credits; adding ${body.credits} would pass ${MAX_BALANCE}. Nothing was added.`,
      );
    case 'topped-up':
      services.metrics?.grant(body.credits);
      return { id, balance: result.key.balance };
    case 'granted-before':
      return { id, balance: result.key.balance };
    case 'expiry-past':
      throw new ApiError('BAD_REQUEST', `expires_at must be later than now (${new Date(services.clock()).toISOString()}).`);
  }
}

export function topUpKeyRoute(app: FastifyInstance, services: Services, hooks: KeyedHooks): void {
  app.post('/admin/keys/:id/topup', { schema, ...hooks }, async (request, reply) => {
    const claim = await claimTopUp(services, request, reply);
    if (claim === 'answered') return reply;
    try {
      const answer = await topUp(services, request, claim);
      if (claim) {
        const response = { status: 200, body: JSON.stringify(answer), contentType: 'application/json; charset=utf-8', creditsRemaining: null };
        await services.idempotency.complete(claim, response);
      }
      return answer;
    } catch (error) {
      if (claim) await services.idempotency.release(claim);
      throw error;
    }
  });
}
