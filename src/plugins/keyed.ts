import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { ApiError } from '../errors.js';
import type { CreditService } from '../services/credits.js';
import type { DebitResult, KeyRecord } from '../store/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key as read at authentication; set by the keyed group. */
    caller: { keyHash: string; key: KeyRecord } | null;
    /** The charge this request paid; set by the charge step. */
    charge: { chargeId: number; balance: number } | null;
  }
  interface FastifyContextConfig {
    /** Fields added to 401/403 bodies, such as /credits' "current_balance": null. */
    authErrorExtra?: Record<string, unknown>;
  }
}

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

/**
 * The keyed group: every route registered inside `register` authenticates its caller after schema
 * validation. Billable routes add `charge` (from the returned steps) to their own preHandlers.
 */
export function keyedGroup(credits: CreditService) {
  async function authenticate(request: FastifyRequest): Promise<void> {
    const extra = request.routeOptions.config.authErrorExtra ?? {};
    const result = await credits.authenticate(request.headers['x-api-key'] as string);
    if (result.outcome === 'unknown-key') throw rejection(result, extra);
    if (result.outcome === 'inactive') throw rejection({ outcome: 'inactive', status: result.key.status }, extra);
    request.caller = { keyHash: result.keyHash, key: result.key };
  }

  /** Spends one credit; the request goes on only if that succeeded. */
  function charge(endpoint: string): preHandlerAsyncHookHandler {
    return async function chargeCredit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const result = await credits.charge(request.caller!.keyHash, endpoint);
      if (result.outcome !== 'charged') throw rejection(result, {});
      request.charge = { chargeId: result.chargeId, balance: result.balance };
      reply.header('x-credits-remaining', String(result.balance));
    };
  }

  function plugin(scope: FastifyInstance): void {
    scope.decorateRequest('caller', null);
    scope.decorateRequest('charge', null);
    scope.addHook('preHandler', authenticate);
    scope.addHook('onSend', async (request, reply) => {
      if (request.charge) reply.header('x-credits-remaining', String(request.charge.balance));
    });
    scope.addHook('onResponse', async (request, reply) => {
      if (request.charge) credits.recordOutcome(request.charge.chargeId, reply.statusCode);
    });
  }

  return { plugin, charge };
}
