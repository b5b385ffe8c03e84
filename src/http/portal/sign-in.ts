import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { newToken, tokenHash } from '../../portal/portal-tokens.js';
import type { Services } from '../../services/services.js';
import { responseHeaders } from '../schemas/common.js';
import type { RouteHooks } from '../steps.js';
import { cookieOf, type PortalAuth, portalActor, portalCallerOf, SESSION_COOKIE, SESSION_SECONDS } from './caller.js';
import { portalErrorResponses, portalSecurity, portalSuccess } from './schemas.js';

const signInSchema = {
  summary: 'Open a portal link',
  description:
    'The link an operator made (POST /admin/accounts/{id}/portal-sessions). Once, before it expires, it opens a session cookie and ' +
    'sends the browser to /portal; a used, expired or unknown link sends it to /portal with the reason, and opens nothing.',
  operationId: 'portalSignIn',
  tags: ['portal'],
  security: [],
  querystring: { type: 'object', required: ['token'], properties: { token: { type: 'string', minLength: 1, maxLength: 100 } } },
  response: {
    303: {
      description: 'To the portal (Location), with the session cookie when the link opened one.',
      headers: { ...responseHeaders.requestId, location: { type: 'string', description: '/portal, or /portal#link-used, -expired or -unknown.' } },
      type: 'null',
    },
    // What a client that follows the redirect gets: the portal page.
    200: {
      description: 'The portal page, to a client that follows the redirect.',
      headers: responseHeaders.requestId,
      content: { 'text/html': { schema: { type: 'string' } } },
    },
    400: portalErrorResponses[400],
    429: portalErrorResponses[429],
    500: portalErrorResponses[500],
    503: portalErrorResponses[503],
  },
} as const;

const signOutSchema = {
  summary: "End the portal's cookie session",
  description: 'Ends the session the cookie names and clears the cookie. Signed in with a key, there is no session: it only clears the cookie.',
  operationId: 'portalSignOut',
  tags: ['portal'],
  security: portalSecurity,
  response: {
    200: portalSuccess('Signed out; the cookie is cleared.', {
      type: 'object',
      required: ['status', 'message'],
      properties: { status: { type: 'integer' }, message: { type: 'string' } },
    }),
    ...portalErrorResponses,
  },
} as const;

/** GET /portal/sign-in and POST /portal/api/sign-out. */
export function signInRoutes(app: FastifyInstance, services: Services, auth: PortalAuth, signedIn: RouteHooks): void {
  // No HEAD: a link preview's HEAD would use the link up.
  app.get('/portal/sign-in', { schema: signInSchema, exposeHeadRoute: false }, async (request, reply) => {
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
    const audit = {
      actor: portalActor(redemption),
      action: 'portal.sign-in',
      target: redemption.accountId,
      requestId: request.id,
      detail: { expires_at: expiresAt },
    };
    await services.store.portal.createSession(
      tokenHash(session),
      { accountId: redemption.accountId, origin: redemption.origin, csrf: randomBytes(24).toString('base64url'), expiresAt },
      audit,
    );
    auth.setSessionCookie(reply, request, session, SESSION_SECONDS);
    return reply.code(303).header('location', '/portal').send();
  });

  app.post('/portal/api/sign-out', { schema: signOutSchema, ...signedIn }, async (request, reply) => {
    const caller = portalCallerOf(request);
    if (caller.via === 'session') await services.store.portal.endSession(caller.sessionHash);
    else if (cookieOf(request, SESSION_COOKIE)) await services.store.portal.endSession(tokenHash(cookieOf(request, SESSION_COOKIE) as string));
    auth.setSessionCookie(reply, request, '', 0);
    return { status: 200, message: 'Signed out.' };
  });
}
