import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import { ApiError } from '../../errors.js';
import type { Claim, IdempotencyService } from '../../idempotency/idempotency-service.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { Step } from '../steps.js';

/**
 * Claims the Idempotency-Key, when one was sent: a replay of the stored answer, 409 while the first
 * attempt runs, 422 if the request differs. `authenticate` runs before any answer given without a
 * debit, since the key may have been identified from a cache.
 */
export function claimIdempotencyKeyStep(idempotency: IdempotencyService, authenticate: Step, metrics: Metrics | undefined): Step {
  const claimFor = async (request: FastifyRequest, reply: FastifyReply, keyHash: string, idempotencyKey: string) => {
    const claim = await idempotency.claim(keyHash, idempotencyKey, {
      method: request.method,
      path: request.routeOptions.url ?? request.url,
      docId: request.headers['svc-doc-id'] as string | undefined,
      body: request.body,
    });
    if (claim.outcome !== 'claimed') await authenticate(request, reply);
    switch (claim.outcome) {
      case 'mismatch':
        throw new ApiError('IDEMPOTENCY_KEY_REUSED');
      case 'in-progress':
        throw new ApiError('IDEMPOTENCY_IN_PROGRESS', undefined, { headers: { 'retry-after': '1' } });
      case 'replay': {
        metrics?.replay();
        const { response } = claim;
        reply
          .code(response.status)
          .header('content-type', response.contentType)
          .header('idempotent-replayed', 'true')
          .header('x-credits-charged', '0');
        if (response.creditsRemaining !== null) reply.header('x-credits-remaining', String(response.creditsRemaining));
        return reply.send(response.body);
      }
      case 'claimed':
        request.idempotency = { claim: { keyHash, idempotencyKey, ref: claim.ref }, chargeId: claim.chargeId };
    }
  };
  return (request, reply) => {
    const idempotencyKey = request.headers['idempotency-key'];
    if (typeof idempotencyKey !== 'string' || !request.caller) return;
    return claimFor(request, reply, request.caller.keyHash, idempotencyKey);
  };
}

/** A paid request's response is kept for replay; a claim whose request was refused before paying is let go. */
export function settleIdempotencyKeyHook(idempotency: IdempotencyService): onSendHookHandler {
  const settle = async (request: FastifyRequest, reply: FastifyReply, held: { claim: Claim }, payload: unknown) => {
    try {
      if (request.charge && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
        await idempotency.complete(held.claim, {
          status: reply.statusCode,
          body: payload.toString(),
          contentType: String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'),
          creditsRemaining: request.charge.balance,
        });
      } else if (!request.charge) {
        await idempotency.release(held.claim);
      }
    } catch (error) {
      // The claim then lapses; a retry taking it over finds the charge by its ref and does not pay again.
      request.log.warn({ err: error }, 'could not settle the idempotency key');
    }
  };
  return (request, reply, payload, done) => {
    const held = request.idempotency;
    if (!held) return done(null, payload);
    request.idempotency = null;
    settle(request, reply, held, payload).then(() => done(null, payload));
  };
}
