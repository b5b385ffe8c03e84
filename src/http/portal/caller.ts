import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_PATTERN } from '../../billing/keys.js';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services/services.js';

/** The portal's session cookie: HttpOnly, SameSite=Strict, and Secure when the service speaks TLS. */
export const SESSION_COOKIE = 'ms_portal';
export const SESSION_SECONDS = 8 * 3600;

/**
 * Who is using the portal: an account, signed in with one of its keys (which may manage only that
 * key) or with a session a portal link opened (every key of the account). `origin`: what the
 * audit log says opened it.
 */
export type PortalCaller =
  | { accountId: string; via: 'key'; keyId: string; origin: string }
  | { accountId: string; via: 'session'; csrf: string; sessionHash: string; origin: string };

export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
export const newToken = () => randomBytes(32).toString('base64url');

/** The value of one cookie of the request, or undefined. */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/**
 * The caller of a portal API request, or 401/403. A key is taken from the x-api-key header only,
 * never from a URL. A session's writes must carry its CSRF token in x-csrf-token: a cross-site
 * form or script cannot read it, so it cannot make one.
 */
export async function portalCaller(services: Services, request: FastifyRequest): Promise<PortalCaller> {
  const query = request.query as Record<string, unknown> | undefined;
  if (query && Object.keys(query).some((name) => /key/i.test(name)))
    throw new ApiError('BAD_REQUEST', 'Send your API key in the x-api-key header, never in a URL. Nothing was done.');
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string') {
    if (!API_KEY_PATTERN.test(apiKey)) throw new ApiError('MALFORMED_API_KEY');
    const authentication = await services.credits.authenticate(apiKey);
    switch (authentication.outcome) {
      case 'ok':
        if (authentication.former) throw new ApiError('PORTAL_FORMER_KEY');
        return { accountId: authentication.key.accountId, via: 'key', keyId: authentication.key.id, origin: `key ${authentication.key.id}` };
      case 'unknown-key':
        throw new ApiError('UNKNOWN_KEY');
      case 'expired':
        throw new ApiError('EXPIRED_KEY', `The API key expired at ${authentication.key.expiresAt}.`);
      default:
        throw new ApiError(authentication.key.status === 'revoked' ? 'REVOKED_KEY' : 'DISABLED_KEY');
    }
  }
  const cookie = cookieOf(request, SESSION_COOKIE);
  const session = cookie ? await services.store.portal.findSession(tokenHash(cookie), new Date(services.clock()).toISOString()) : undefined;
  if (!session || !cookie) throw new ApiError('PORTAL_SIGN_IN_REQUIRED');
  if (request.method !== 'GET' && request.headers['x-csrf-token'] !== session.csrf) throw new ApiError('CSRF_REJECTED');
  return { accountId: session.accountId, via: 'session', csrf: session.csrf, sessionHash: tokenHash(cookie), origin: session.origin };
}

/** Who the audit log names for a portal change: the account, and the key or link that opened the portal. */
export const portalActor = (caller: Pick<PortalCaller, 'accountId' | 'origin'>) => `portal:${caller.accountId} (${caller.origin})`;

/** The origin callers reach the service at: PUBLIC_URL, else the request's own. */
export function publicOrigin(request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}

export function setSessionCookie(reply: FastifyReply, request: FastifyRequest, value: string, maxAge: number): void {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  reply.header('set-cookie', `${SESSION_COOKIE}=${value}; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`);
}
