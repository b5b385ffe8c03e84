import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { auditReport } from '../../admin/admin-tokens.js';
import type { Services } from '../../services/services.js';
import { cookieOf, newToken, type PortalAuth, portalActor, SESSION_COOKIE, SESSION_SECONDS, tokenHash } from './caller.js';

const signInSchema = {
  summary: 'Open a portal link',
  description:
    'The link an operator made (POST /admin/accounts/{id}/portal-sessions). Once, before it expires, it opens a session cookie and ' +
    'sends the browser to /portal; a used, expired or unknown link sends it to /portal with the reason, and opens nothing.',
  tags: ['portal'],
  hide: true,
  querystring: { type: 'object', required: ['token'], properties: { token: { type: 'string', minLength: 1, maxLength: 100 } } },
  response: { 303: { description: 'To the portal.', type: 'null' } },
} as const;

/** GET /portal/sign-in and POST /portal/api/sign-out. */
export function signInRoutes(app: FastifyInstance, services: Services, auth: PortalAuth): void {
  app.get('/portal/sign-in', { schema: signInSchema }, async (request, reply) => {
    const { token } = request.query as { token: string };
    auth.refuseThrottled(request);
    const now = services.clock();
    const redemption = await services.store.portal.redeemLink(tokenHash(token), new Date(now).toISOString());
    reply.header('referrer-policy', 'no-referrer').header('cache-control', 'no-store');
    if (redemption.outcome !== 'redeemed') {
      auth.failed(request);
      return reply.code(303).header('location', `/portal#link-${redemption.outcome}`).send();
    }
    const session = newToken();
    const expiresAt = new Date(now + SESSION_SECONDS * 1000).toISOString();
    await services.store.portal.createSession(tokenHash(session), {
      accountId: redemption.accountId,
      origin: redemption.origin,
      csrf: randomBytes(24).toString('base64url'),
      expiresAt,
    });
    await auditReport(services.store.admin, portalActor(redemption), request.id)('portal.sign-in', redemption.accountId, { expires_at: expiresAt });
    auth.setSessionCookie(reply, request, session, SESSION_SECONDS);
    return reply.code(303).header('location', '/portal').send();
  });

  app.post(
    '/portal/api/sign-out',
    { schema: { summary: "End the portal's cookie session", tags: ['portal'], hide: true } },
    async (request, reply) => {
      const caller = await auth.caller(request);
      if (caller.via === 'session') await services.store.portal.endSession(caller.sessionHash);
      else if (cookieOf(request, SESSION_COOKIE)) await services.store.portal.endSession(tokenHash(cookieOf(request, SESSION_COOKIE) as string));
      auth.setSessionCookie(reply, request, '', 0);
      return { status: 200, message: 'Signed out.' };
    },
  );
}
