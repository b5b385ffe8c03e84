import type { FastifyInstance } from 'fastify';
import type { KeyStatus } from '../../../billing/ledger.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminKeyOf, keysFor } from '../keys.js';
import { adminKey, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses } from '../schemas.js';

const CHANGES: Array<{ action: 'disable' | 'enable' | 'revoke'; status: KeyStatus; summary: string }> = [
  { action: 'disable', status: 'disabled', summary: 'Disable a key (reversible: enable)' },
  { action: 'enable', status: 'active', summary: 'Enable a disabled key' },
  { action: 'revoke', status: 'revoked', summary: 'Revoke a key, for good' },
];

/** POST /admin/keys/{id}/disable, /enable and /revoke: the CLI's operations, with the same rules. */
export function keyStatusRoutes(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  for (const { action, status, summary } of CHANGES) {
    const schema = {
      summary,
      description: "The command line's operation, with its rules: a revoked key cannot be enabled or disabled again (409).",
      operationId: `admin${action[0].toUpperCase()}${action.slice(1)}Key`,
      tags: ['admin'],
      security: adminSecurity,
      params: idParams,
      response: {
        200: {
          description: 'The key as it is now; `changed` is false when it already was so.',
          headers: adminSuccessHeaders,
          type: 'object',
          required: [...adminKey.required, 'changed'],
          properties: { ...adminKey.properties, changed: { type: 'boolean' } },
        },
        404: errorResponse('No key has this id.'),
        409: errorResponse('The key is revoked, which is permanent.'),
        ...adminWriteErrorResponses,
      },
    } as const;
    app.post(`/admin/keys/:id/${action}`, { schema, ...hooks }, async (request) => {
      const id = (request.params as { id: string }).id;
      const change = await keysFor(services, request).setStatus(id, status);
      if (change.outcome === 'not-found') throw new ApiError('KEY_NOT_FOUND', `No key has id "${id}".`);
      if (change.outcome === 'revoked') throw new ApiError('KEY_REVOKED');
      services.credits.forget(id);
      return { ...adminKeyOf(change.key), changed: change.outcome === 'changed' };
    });
  }
}
