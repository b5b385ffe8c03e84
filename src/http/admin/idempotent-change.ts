import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Answering } from '../../billing/key-admin.js';
import { ApiError } from '../../errors.js';
import type { Claim } from '../../idempotency/idempotency-service.js';
import type { Services } from '../../services/services.js';

/**
 * Admin Idempotency-Keys belong to the operator, not to one token, as Stripe scopes them to the
 * account: a billing system that retries after rotating its token is still answered once.
 */
const OPERATOR_SCOPE = 'admin';

/** Claims the request's Idempotency-Key; answers a replay, 409 or 422 itself. Undefined when none was sent. */
async function claimOf(services: Services, request: FastifyRequest, reply: FastifyReply): Promise<Claim | 'answered' | undefined> {
  const idempotencyKey = request.headers['idempotency-key'];
  if (typeof idempotencyKey !== 'string') return undefined;
  const claim = await services.idempotency.claim(OPERATOR_SCOPE, idempotencyKey, {
    method: request.method,
    path: request.routeOptions.url ?? request.url,
    docId: (request.params as { id?: string }).id,
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
      return { keyHash: OPERATOR_SCOPE, idempotencyKey, ref: claim.ref };
  }
}

/**
 * An admin change that may carry an Idempotency-Key. `answerOf` turns the change's outcome into the
 * answer, or the refusal to throw. With a key, the answer is kept with the change, in its own
 * transaction, so a retry after any fault is either answered from it or finds nothing done; a claim
 * is let go only when nothing committed (a refusal, or a transaction rolled back).
 */
export async function idempotentChange<Result, Body>(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  change: (answering: Answering<Result>) => Promise<Result>,
  answerOf: (result: Result) => Body | ApiError,
): Promise<Body | FastifyReply> {
  const claim = await claimOf(services, request, reply);
  if (claim === 'answered') return reply;
  const answering: Answering<Result> = claim && {
    entry: claim,
    answer: (result) => {
      const body = answerOf(result);
      if (body instanceof ApiError) return undefined;
      return { status: 200, body: JSON.stringify(body), contentType: 'application/json; charset=utf-8', creditsRemaining: null };
    },
  };
  try {
    const answer = answerOf(await change(answering));
    if (answer instanceof ApiError) throw answer;
    return answer;
  } catch (error) {
    // Release deletes only a claim still running: one whose change committed was completed with it.
    // If the store cannot even do that, the claim lapses after IDEMPOTENCY_LOCK_MS instead.
    if (claim) await services.idempotency.release(claim).catch((releaseError) => request.log.warn({ err: releaseError }, 'claim not released'));
    throw error;
  }
}
