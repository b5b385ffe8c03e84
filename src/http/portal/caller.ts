import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_PATTERN } from '../../billing/keys.js';
import { ApiError } from '../../errors.js';
import { tokenHash } from '../../portal/portal-tokens.js';
import type { Services } from '../../services/services.js';
import type { Step } from '../steps.js';
import { SignInThrottle } from './sign-in-throttle.js';

/** The portal's session cookie: HttpOnly, SameSite=Strict, and Secure when customers reach the service over TLS. */
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

declare module 'fastify' {
  interface FastifyRequest {
    /** Who calls a portal API route: set by PortalAuth.signedIn, the step each of them is declared with. */
    portalCaller: PortalCaller | null;
  }
}

/** The portal caller the route's signedIn step found. */
export function portalCallerOf(request: FastifyRequest): PortalCaller {
  return request.portalCaller as PortalCaller;
}

/** The value of one cookie of the request, or undefined. */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** What a failed sign-in is refused with, counted against the address that tried (SignInThrottle). */
const SIGN_IN_FAILURES = new Set(['MALFORMED_API_KEY', 'UNKNOWN_KEY', 'PORTAL_FORMER_KEY']);

/**
 * Who calls the portal, and its session cookie. A key is taken from the x-api-key header only,
 * never from a URL. A session's writes must carry its CSRF token in x-csrf-token: a cross-site
 * form or script cannot read it, so it cannot make one. Failed sign-ins are throttled by address.
 */
export class PortalAuth {
  private readonly signIns: SignInThrottle;
  /** Secure whenever customers reach the service over TLS, behind a proxy too. */
  private readonly secureOrigin: boolean;

  constructor(
    private readonly services: Services,
    publicUrl: string | undefined,
  ) {
    this.signIns = new SignInThrottle(services.clock);
    this.secureOrigin = publicUrl?.startsWith('https:') ?? false;
  }

  /**
   * The step every portal API route is declared with: sets request.portalCaller, or refuses with
   * 401/403, or 429 for an address that failed to sign in too often.
   */
  readonly signedIn: Step = async (request) => {
    this.refuseThrottled(request);
    try {
      request.portalCaller = await this.identify(request);
    } catch (error) {
      if (error instanceof ApiError && SIGN_IN_FAILURES.has(error.code)) this.signIns.failed(request.ip);
      throw error;
    }
  };

  /** 429 with Retry-After while the request's address may not try to sign in. */
  refuseThrottled(request: FastifyRequest): void {
    const wait = this.signIns.retryAfter(request.ip);
    if (wait !== undefined) {
      throw new ApiError('RATE_LIMITED', `Too many failed portal sign-ins from your address. Retry in ${wait} s.`, {
        headers: { 'retry-after': String(wait) },
      });
    }
  }

  /** A sign-in that failed (a link used, expired or unknown), counted against the request's address. */
  failed(request: FastifyRequest): void {
    this.signIns.failed(request.ip);
  }

  setSessionCookie(reply: FastifyReply, request: FastifyRequest, value: string, maxAge: number): void {
    const secure = this.secureOrigin || request.protocol === 'https' ? '; Secure' : '';
    reply.header('set-cookie', `${SESSION_COOKIE}=${value}; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure}`);
  }

  private async identify(request: FastifyRequest): Promise<PortalCaller> {
    const { services } = this;
    const query = request.query as Record<string, unknown> | undefined;
    if (query && Object.keys(query).some((name) => /key/i.test(name)))
      throw new ApiError('BAD_REQUEST', 'Send your API key in the x-api-key header, never in a URL. Nothing was done.');
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey === 'string') return this.keyCaller(apiKey);
    const cookie = cookieOf(request, SESSION_COOKIE);
    const session = cookie ? await services.store.portal.findSession(tokenHash(cookie), new Date(services.clock()).toISOString()) : undefined;
    if (!session || !cookie) throw new ApiError('PORTAL_SIGN_IN_REQUIRED');
    if (request.method !== 'GET' && request.headers['x-csrf-token'] !== session.csrf) throw new ApiError('CSRF_REJECTED');
    return { accountId: session.accountId, via: 'session', csrf: session.csrf, sessionHash: tokenHash(cookie), origin: session.origin };
  }

  private async keyCaller(apiKey: string): Promise<PortalCaller> {
    if (!API_KEY_PATTERN.test(apiKey)) throw new ApiError('MALFORMED_API_KEY');
    const authentication = await this.services.credits.authenticate(apiKey);
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
}

/** Who the audit log names for a portal change: the account, and the key or link that opened the portal. */
export const portalActor = (caller: Pick<PortalCaller, 'accountId' | 'origin'>) => `portal:${caller.accountId} (${caller.origin})`;
