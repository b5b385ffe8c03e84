import { errorResponse, responseHeaders } from '../schemas/common.js';

/** A portal call is signed in with one of the account's API keys, or with the cookie a portal link opened. */
export const portalSecurity: Array<Record<string, string[]>> = [{ apiKey: [] }, { portalSession: [] }];

/** What every portal API call may be answered besides its own: the portal is free, so nothing here is charged. */
export const portalErrorResponses = {
  400: errorResponse('The request is invalid: a malformed field or key, or a key sent in a URL.'),
  401: errorResponse('Not signed in: no key or session, an unknown key, a rolled key in its grace period, or a session that ended.'),
  403: errorResponse(
    "A revoked, disabled or expired key; a session's write without its CSRF token; or, signed in with a key, a change to another key.",
  ),
  429: errorResponse('Too many failed sign-ins from this address; Retry-After says when to try again.', responseHeaders.retryAfter),
  500: errorResponse('Unexpected error; the x-request-id header identifies it in the logs.'),
  503: errorResponse('The data store is not available right now; Retry-After says when to retry.', responseHeaders.retryAfter),
} as const;

/** A portal answer's success: x-request-id. */
export const portalSuccess = <Schema extends object>(description: string, schema: Schema) =>
  ({ description, headers: responseHeaders.requestId, ...schema }) as const;
