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
    const token = request.adminToken;
    if (token?.scopes.includes(scope)) return undefined;
    const which = token?.readOnly ? 'This admin token is read-only' : 'This admin token';
    throw new ApiError(
      'MISSING_SCOPE',
      `${which}: it lacks the scope ${scope}, which ${request.method} ${request.routeOptions.url} needs. ` +
        `Create one that has it: npx metered-search admin tokens create --name <who uses it> --scopes ${scope}`,
    );
  };
}
