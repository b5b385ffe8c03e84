import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler, preHandlerHookHandler } from 'fastify';
import { ApiError } from '../errors.js';
import type { CreditService } from '../services/credits.js';
import { hashApiKey } from '../services/keys.js';
import type { DebitResult, KeyRecord } from '../store/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key as read at authentication. */
    caller: { keyHash: string; key: KeyRecord } | null;
    /** The charge this request paid; set by the charge step. */
    charge: { chargeId: number; balance: number } | null;
  }
  interface FastifyContextConfig {
    /** Marks a billable route: the endpoint name its charges are recorded under. */
    billable?: string;
    /** Fields added to 401/403 bodies, such as /credits' "current_balance": null. */
    authErrorExtra?: Record<string, unknown>;
  }
}

type Step = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

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
 * The keyed group. Every route registered in it gets, after schema validation, the steps
 * authenticate (401/403) -> the route's own preHandlers -> charge (402), the last one only for
 * routes whose config names them `billable`. A billable route with no steps of its own folds
 * authentication into the debit: the one conditional statement that spends the credit also
 * checks the key, so an unknown or inactive key is still refused before anything is spent.
 */
export function keyedGroup(scope: FastifyInstance, credits: CreditService): void {
  const authenticate: Step = async (request) => {
    const extra = request.routeOptions.config.authErrorExtra ?? {};
    const result = await credits.authenticate(request.headers['x-api-key'] as string);
    if (result.outcome === 'unknown-key') throw rejection(result, extra);
    if (result.outcome === 'inactive') throw rejection({ outcome: 'inactive', status: result.key.status }, extra);
    request.caller = { keyHash: result.keyHash, key: result.key };
  };

  const charge =
    (endpoint: string): Step =>
    async (request, reply) => {
      const keyHash = request.caller?.keyHash ?? hashApiKey(request.headers['x-api-key'] as string);
      const result = await credits.charge(keyHash, endpoint);
      if (result.outcome !== 'charged') throw rejection(result, {});
      request.charge = { chargeId: result.chargeId, balance: result.balance };
      // Every response after a successful debit says what is left, whatever its status (decisions.md 11).
      reply.header('x-credits-remaining', String(result.balance));
    };

  const recordOutcome: onResponseHookHandler = (request, reply, done) => {
    if (request.charge) credits.recordOutcome(request.charge.chargeId, reply.statusCode);
    done();
  };

  scope.decorateRequest('caller', null);
  scope.decorateRequest('charge', null);
  scope.addHook('onRoute', (route) => {
    const own = [route.preHandler ?? []].flat() as preHandlerHookHandler[];
    const endpoint = route.config?.billable;
    if (endpoint && own.length === 0) route.preHandler = [charge(endpoint)];
    else route.preHandler = [authenticate, ...own, ...(endpoint ? [charge(endpoint)] : [])] as preHandlerHookHandler[];
    if (endpoint) route.onResponse = [...[route.onResponse ?? []].flat(), recordOutcome] as onResponseHookHandler[];
  });
}
