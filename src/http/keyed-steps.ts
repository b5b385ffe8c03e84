import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import { hashApiKey } from '../billing/key-admin.js';
import type { DebitResult, KeyRecord } from '../billing/ledger.js';
import { ApiError } from '../errors.js';
import type { Claim } from '../idempotency/idempotency-service.js';
import type { RateLimitDecision } from '../rate-limit/rate-limit.js';
import type { Services } from '../services/services.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's key: checked by authentication, or (billable routes) as last known, the debit checking it. */
    caller: { keyHash: string; key: KeyRecord } | null;
    /** The charge this request paid; set by the charge step. */
    charge: { chargeId: number; balance: number } | null;
    /** This request's claim on its Idempotency-Key; `chargeId` when an earlier attempt already paid. */
    idempotency: { claim: Claim; chargeId: number | null } | null;
  }
  interface FastifyContextConfig {
    /** Fields added to 401/403 bodies, such as /credits' "current_balance": null. */
    authErrorExtra?: Record<string, unknown>;
  }
}

/** A step returns a promise only when it has to wait: most requests pass most steps synchronously. */
export type Step = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | undefined;

/** The steps as one hook: one hook call per request rather than one per step. */
function inOrder(steps: Step[]): preHandlerHookHandler {
  return async function runSteps(request, reply) {
    for (const step of steps) {
      const pending = step(request, reply);
      if (pending) await pending;
      if (reply.sent) return reply;
    }
  };
}

const POLICY = 'per-key';

function rejection(result: Exclude<DebitResult, { outcome: 'charged' }>, extra: Record<string, unknown>): ApiError {
  switch (result.outcome) {
    case 'unknown-key':
      return new ApiError('UNKNOWN_KEY', undefined, { extra });
    case 'inactive':
      return new ApiError(result.status === 'revoked' ? 'REVOKED_KEY' : 'DISABLED_KEY', undefined, { extra });
    case 'no-credits':
      return new ApiError('NO_CREDITS');
  }
}

/** The IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers). */
function rateLimitHeaders(decision: Extract<RateLimitDecision, { limited: true }>): Record<string, string> {
  return {
    'ratelimit-policy': `"${POLICY}";q=${decision.capacity};w=1`,
    ratelimit: `"${POLICY}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}

/** The hooks a keyed route is declared with. */
export interface KeyedHooks {
  preHandler: preHandlerHookHandler;
  onSend?: onSendHookHandler;
  onResponse?: onResponseHookHandler;
}

export interface KeyedSteps {
  /** Checks the key (401/403) and sets request.caller. */
  authenticate: Step;
  /**
   * Looks the key up, as known at most a second ago, without refusing it: on billable routes the
   * debit checks the key in the same statement that spends the credit, so the hot path makes one
   * store round trip and an unknown or inactive key is still refused before anything is spent.
   */
  identify: Step;
  /** The key's requests per second (429 with Retry-After and the RateLimit headers). */
  limitRate: Step;
  /** Claims the Idempotency-Key: a replay, 409 while the first attempt runs, 422 if the request differs. */
  claimIdempotencyKey: Step;
  /** Spends one credit (402 at zero) and says what is left in x-credits-remaining. */
  charge(endpoint: string): Step;
  /** A free keyed route: its steps as one preHandler. */
  free(...steps: Step[]): KeyedHooks;
  /** A billable route: its steps, then keeping the response for replay and recording the charge's outcome. */
  billable(...steps: Step[]): KeyedHooks;
}

/** The steps keyed routes are declared with (routes/index.ts puts them in order), bound to the services. */
export function keyedSteps(scope: FastifyInstance, services: Services): KeyedSteps {
  const { credits, idempotency, rateLimits } = services;
  scope.decorateRequest('caller', null);
  scope.decorateRequest('charge', null);
  scope.decorateRequest('idempotency', null);

  const authenticate: Step = async (request) => {
    const extra = request.routeOptions.config.authErrorExtra ?? {};
    const result = await credits.authenticate(request.headers['x-api-key'] as string);
    if (result.outcome === 'unknown-key') throw rejection(result, extra);
    if (result.outcome === 'inactive') throw rejection({ outcome: 'inactive', status: result.key.status }, extra);
    request.caller = { keyHash: result.keyHash, key: result.key };
  };

  const identify: Step = (request) => {
    const keyHash = hashApiKey(request.headers['x-api-key'] as string);
    const known = credits.identify(keyHash);
    if (!(known instanceof Promise)) {
      if (known) request.caller = { keyHash, key: known };
      return;
    }
    return known.then((key) => {
      if (key) request.caller = { keyHash, key };
    });
  };

  const limitRate: Step = (request, reply) => {
    const caller = request.caller;
    if (!caller || rateLimits.perSecondFor(caller.key) <= 0) return;
    return rateLimits.take(caller.key.id, caller.key).then((decision) => {
      if (!decision.limited) return;
      reply.headers(rateLimitHeaders(decision));
      if (!decision.allowed) throw new ApiError('RATE_LIMITED', undefined, { headers: { 'retry-after': String(decision.retryAfterSeconds) } });
    });
  };

  const claimIdempotencyKey: Step = (request, reply) => {
    const idempotencyKey = request.headers['idempotency-key'];
    if (typeof idempotencyKey !== 'string' || !request.caller) return;
    return claimFor(request, reply, request.caller.keyHash, idempotencyKey);
  };

  const claimFor = async (request: FastifyRequest, reply: FastifyReply, keyHash: string, idempotencyKey: string) => {
    const claim = await idempotency.claim(keyHash, idempotencyKey, {
      method: request.method,
      path: request.routeOptions.url ?? request.url,
      docId: request.headers['svc-doc-id'] as string | undefined,
      body: request.body,
    });
    // The key was identified from a cache: before answering without a debit (which checks the key), check it now.
    if (claim.outcome !== 'claimed') await authenticate(request, reply);
    switch (claim.outcome) {
      case 'mismatch':
        throw new ApiError('IDEMPOTENCY_KEY_REUSED');
      case 'in-progress':
        throw new ApiError('IDEMPOTENCY_IN_PROGRESS', undefined, { headers: { 'retry-after': '1' } });
      case 'replay': {
        const { response } = claim;
        reply.code(response.status).header('content-type', response.contentType).header('idempotent-replayed', 'true');
        if (response.creditsRemaining !== null) reply.header('x-credits-remaining', String(response.creditsRemaining));
        return reply.send(response.body);
      }
      case 'claimed':
        request.idempotency = { claim: { keyHash, idempotencyKey, ref: claim.ref }, chargeId: claim.chargeId };
    }
  };

  const charge =
    (endpoint: string): Step =>
    async (request, reply) => {
      const keyHash = request.caller?.keyHash ?? hashApiKey(request.headers['x-api-key'] as string);
      const paidBefore = request.idempotency?.chargeId;
      if (paidBefore != null) {
        // An earlier attempt with this Idempotency-Key paid and died before answering: run again, free,
        // if the key is still active.
        await authenticate(request, reply);
        request.charge = { chargeId: paidBefore, balance: request.caller!.key.balance };
      } else {
        const result = await credits.charge(keyHash, endpoint, request.idempotency?.claim.ref);
        if (result.outcome !== 'charged') throw rejection(result, {});
        request.charge = { chargeId: result.chargeId, balance: result.balance };
      }
      // Every response after a successful debit says what is left, whatever its status (docs/api.md).
      reply.header('x-credits-remaining', String(request.charge.balance));
    };

  /** A paid request's response is kept for replay; a claim whose request was refused before paying is let go. */
  const settleIdempotencyKey: onSendHookHandler = (request, reply, payload, done) => {
    const held = request.idempotency;
    if (!held) return done(null, payload);
    request.idempotency = null;
    settle(request, reply, held, payload).then(() => done(null, payload));
  };

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

  const recordOutcome: onResponseHookHandler = (request, reply, done) => {
    if (request.charge) credits.recordOutcome(request.charge.chargeId, reply.statusCode);
    done();
  };

  return {
    authenticate,
    identify,
    limitRate,
    claimIdempotencyKey,
    charge,
    free: (...steps) => ({ preHandler: inOrder(steps) }),
    billable: (...steps) => ({ preHandler: inOrder(steps), onSend: settleIdempotencyKey, onResponse: recordOutcome }),
  };
}
