import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminTokenRecord } from '../../../admin/admin-store.js';
import { ApiError } from '../../../errors.js';
import { newToken, tokenHash } from '../../../portal/portal-tokens.js';
import type { Services } from '../../../services/services.js';
import { publicOrigin } from '../../public-origin.js';
import { errorResponse, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { existingAccount } from '../accounts.js';
import { adminSecurity, adminSuccessHeaders, adminWriteErrorResponses } from '../schemas.js';

/** How long a portal link may wait to be opened. */
const LINK_MINUTES = 15;

const createSchema = {
  summary: "A sign-in link to an account's portal",
  description:
    'For a website that already signs its customers in: send the customer to `url`, which opens the portal for this account ' +
    `in a cookie session that may manage every key of the account: rename and roll them, receiving the new plain keys. The link ` +
    `works once, within ${LINK_MINUTES} minutes, and points at PUBLIC_URL (else, without ADMIN_PORT, at the origin this request came to).`,
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
    409: errorResponse('The admin API has a listener of its own (ADMIN_PORT) and PUBLIC_URL is not set: no link can point at the portal.'),
    ...adminWriteErrorResponses,
  },
} as const;

const endSchema = {
  summary: "End an account's portal sessions",
  description: 'Signs out every portal session of the account and voids its links not yet opened. Audited.',
  operationId: 'adminEndPortalSessions',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  response: {
    200: {
      description: 'How many sessions ended and links were voided.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['sessions_ended', 'links_voided'],
      properties: { sessions_ended: { type: 'integer' }, links_voided: { type: 'integer' } },
    },
    404: errorResponse('No account has this id.'),
    ...adminWriteErrorResponses,
  },
} as const;

/** Where a link points: PUBLIC_URL, else this request's origin when this listener serves the portal too. */
function linkOrigin(request: FastifyRequest, origin: { publicUrl: string | undefined; servesPortal: boolean }): string {
  if (origin.publicUrl === undefined && !origin.servesPortal) throw new ApiError('PUBLIC_URL_REQUIRED');
  return publicOrigin(request, origin.publicUrl);
}

/** POST and DELETE /admin/accounts/{id}/portal-sessions (scope portal:write). */
export function portalSessionRoutes(
  app: FastifyInstance,
  services: Services,
  origin: { publicUrl: string | undefined; servesPortal: boolean },
  hooks: RouteHooks,
): void {
  app.post('/admin/accounts/:id/portal-sessions', { schema: createSchema, ...hooks }, async (request, reply) => {
    const url = linkOrigin(request, origin);
    const account = await existingAccount(services.store, (request.params as { id: string }).id);
    const token = newToken();
    const expiresAt = new Date(services.clock() + LINK_MINUTES * 60_000).toISOString();
    const operator = request.adminToken as AdminTokenRecord;
    const audit = {
      actor: operator.name,
      action: 'accounts.portal-link',
      target: account.id,
      requestId: request.id,
      detail: { expires_at: expiresAt },
    };
    await services.store.portal.createLink(
      tokenHash(token),
      { accountId: account.id, origin: `link of admin token ${operator.id}`, expiresAt },
      audit,
    );
    return reply.code(201).send({ url: `${url}/portal/sign-in?token=${token}`, expires_at: expiresAt });
  });

  app.delete('/admin/accounts/:id/portal-sessions', { schema: endSchema, ...hooks }, async (request) => {
    const account = await existingAccount(services.store, (request.params as { id: string }).id);
    const operator = request.adminToken as AdminTokenRecord;
    const ended = await services.store.portal.endAccountSessions(account.id, new Date(services.clock()).toISOString(), (counts) => ({
      actor: operator.name,
      action: 'accounts.portal-sessions-ended',
      target: account.id,
      requestId: request.id,
      detail: { sessions: counts.sessions, links: counts.links },
    }));
    return { sessions_ended: ended.sessions, links_voided: ended.links };
  });
}
