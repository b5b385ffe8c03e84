import type { FastifyReply, FastifyRequest, onResponseHookHandler, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import type { KeyRecord } from '../../billing/ledger.js';
import type { Claim } from '../../idempotency/idempotency-service.js';

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

/** The hooks a keyed route is declared with. */
export interface KeyedHooks {
  preHandler: preHandlerHookHandler;
  onSend?: onSendHookHandler;
  onResponse?: onResponseHookHandler;
}

/** The steps as one hook: one hook call per request rather than one per step. */
export function inOrder(steps: Step[]): preHandlerHookHandler {
  return async function runSteps(request, reply) {
    for (const step of steps) {
      const pending = step(request, reply);
      if (pending) await pending;
      if (reply.sent) return reply;
    }
  };
}
