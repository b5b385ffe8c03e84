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

/** Refuses a read-only token (403): for the routes that change something. */
export const requireWriteStep: Step = (request) => {
  if (request.adminToken?.readOnly !== false) throw new ApiError('READ_ONLY_TOKEN');
  return undefined;
};
