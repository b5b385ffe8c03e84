import type { FastifyInstance } from 'fastify';
import { auditReport } from '../../../admin/admin-tokens.js';
import type { Services } from '../../../services/services.js';
import { newToken, publicOrigin, tokenHash } from '../../portal/caller.js';
import { errorResponse } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { existingAccount } from '../accounts.js';
import { adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, idParams } from '../schemas.js';

/** How long a portal link may wait to be opened. */
const LINK_MINUTES = 15;

const schema = {
  summary: "A sign-in link to an account's portal",
  description:
    'For a website that already signs its customers in: send the customer to `url`, which opens the portal for this account ' +
    `in a cookie session. The link works once, within ${LINK_MINUTES} minutes.`,
  operationId: 'adminCreatePortalSession',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  response: {
    201: {
      description: 'The link and when it stops working.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['url', 'expires_at'],
      properties: { url: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } },
    },
    404: errorResponse('No account has this id.'),
    ...adminWriteErrorResponses,
  },
} as const;

export function portalSessionRoute(app: FastifyInstance, services: Services, publicUrl: string | undefined, hooks: RouteHooks): void {
  app.post('/admin/accounts/:id/portal-sessions', { schema, ...hooks }, async (request, reply) => {
    const account = await existingAccount(services.store, (request.params as { id: string }).id);
    const token = newToken();
    const expiresAt = new Date(services.clock() + LINK_MINUTES * 60_000).toISOString();
    await services.store.portal.createLink(tokenHash(token), account.id, expiresAt);
    const operator = request.adminToken as { name: string };
    await auditReport(services.store.admin, operator.name, request.id)('accounts.portal-link', account.id, { expires_at: expiresAt });
    return reply.code(201).send({ url: `${publicOrigin(request, publicUrl)}/portal/sign-in?token=${token}`, expires_at: expiresAt });
  });
}
