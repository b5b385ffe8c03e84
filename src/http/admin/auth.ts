import type { FastifyRequest } from 'fastify';
import type { AdminScope } from '../../admin/admin-scopes.js';
import type { AdminTokenRecord } from '../../admin/admin-store.js';
import type { AdminTokens } from '../../admin/admin-tokens.js';
import { ApiError } from '../../errors.js';
import type { Step } from '../steps.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin token this request was authorised by. */
    adminToken: AdminTokenRecord | null;
  }
}

/** Checks `Authorization: Bearer <token>` (401) and sets request.adminToken. */
export function requireTokenStep(tokens: AdminTokens): Step {
  return async (request) => {
    const check = await tokens.check(request.headers.authorization);
    if (check.outcome === 'malformed') throw new ApiError('ADMIN_TOKEN_REQUIRED');
    if (check.outcome === 'unknown') throw new ApiError('UNKNOWN_ADMIN_TOKEN');
    request.adminToken = check.token;
  };
}

/** Refuses a token without `scope` (403, naming it): each admin route checks its one scope. */
export function requireScopeStep(scope: AdminScope): Step {
  return (request) => {
    if (!request.adminToken?.scopes.includes(scope)) throw missingScope(request, scope, `${request.method} ${request.routeOptions.url}`);
    return undefined;
  };
}

/** Refuses a body granting credits (`credits` above 0) without credits:write, whatever the route's own scope. */
export const requireScopeToGrantStep: Step = (request) => {
  const credits = (request.body as { credits?: unknown } | null | undefined)?.credits;
  if (typeof credits !== 'number' || credits <= 0 || request.adminToken?.scopes.includes('credits:write')) return undefined;
  throw missingScope(request, 'credits:write', `granting credits (the body's "credits") with ${request.method} ${request.routeOptions.url}`);
};

function missingScope(request: FastifyRequest, scope: AdminScope, what: string): ApiError {
  const which = request.adminToken?.readOnly ? 'This admin token is read-only' : 'This admin token';
  return new ApiError(
    'MISSING_SCOPE',
    `${which}: it lacks the scope ${scope}, which ${what} needs. ` +
      `Create one that has it: npx metered-search admin tokens create --name <who uses it> --scopes ${scope}`,
  );
}
