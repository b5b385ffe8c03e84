/**
 * The error catalogue: every error the API answers with, by code. Each becomes the envelope
 * {status, message} with status equal to the HTTP code.
 */
export const errorCatalogue = {
  BAD_REQUEST: { status: 400, message: 'The request is invalid.' },
  MISSING_API_KEY: { status: 400, message: 'The x-api-key header is required: send your 64-character hexadecimal API key.' },
  MALFORMED_API_KEY: { status: 400, message: 'The x-api-key header must be exactly 64 hexadecimal characters (0-9, a-f).' },
  MISSING_DOC_ID: { status: 400, message: 'The svc-doc-id header is required: send the identifier of the document to fetch.' },
  MISSING_QUERY: {
    status: 400,
    message: 'The body must include a query field: a non-empty string, or a match clause such as {"match": {"text": "..."}}.',
  },
  INVALID_QUERY: { status: 400, message: 'The query object is not one this service takes.' },
  MISSING_IMAGE: {
    status: 400,
    message: 'The body must include image_b64: the image encoded in base64 (aliases: image_base64, probe_image_b64, probe_image_url).',
  },
  UNSUPPORTED_IMAGE: { status: 400, message: 'The image is not a JPEG, PNG or WebP image.' },
  BODY_TOO_DEEP: { status: 400, message: 'The body nests JSON objects and arrays more than 64 levels deep: send a flatter body.' },
  INVALID_JSON: { status: 400, message: 'The body is not valid JSON.' },
  WRONG_CONTENT_TYPE: { status: 400, message: 'The body must be JSON sent with Content-Type: application/json.' },
  UNKNOWN_KEY: { status: 401, message: 'The API key is not recognised. Check the key, or ask the operator for one.' },
  REVOKED_KEY: { status: 403, message: 'The API key has been revoked and can no longer be used.' },
  DISABLED_KEY: { status: 403, message: 'The API key is disabled. Ask the operator to enable it.' },
  EXPIRED_KEY: { status: 403, message: 'The API key has expired. Ask the operator for a new one.' },
  NO_CREDITS: { status: 402, message: 'The API key has no credits left. Ask the operator who gave you this API key for more credits.' },
  NOT_FOUND: { status: 404, message: 'No endpoint at this path.' },
  DOCUMENT_NOT_FOUND: { status: 404, message: 'Document not found.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed.' },
  INVALID_IDEMPOTENCY_KEY: { status: 400, message: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters (no spaces), sent once.' },
  IDEMPOTENCY_IN_PROGRESS: {
    status: 409,
    message: 'A request with this Idempotency-Key is still running. Retry after a moment to get its response.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    message: 'This Idempotency-Key was used for a different request (method, path, svc-doc-id or body). Use a new key for a new request.',
  },
  SPEND_CAP_REACHED: { status: 429, message: 'This API key has reached a spend cap; the message says which and when it resets.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests for this API key. Retry after the number of seconds in Retry-After.' },
  BODY_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  IMAGE_TOO_LARGE: { status: 413, message: 'The image is too large.' },
  INTERNAL: { status: 500, message: 'Internal error.' },
  UPSTREAM_FAILURE: { status: 502, message: 'The face recognition service failed.' },
  FACE_SERVICE_UNAVAILABLE: { status: 503, message: 'Face search is not available right now.' },
  SEMANTIC_NOT_CONFIGURED: {
    status: 400,
    message: 'This service has no embedding model configured, so "mode" can only be "lexical" (or left out). You were not charged.',
  },
  EMBEDDER_UNAVAILABLE: {
    status: 503,
    message:
      'The embedding model did not answer, so a semantic query cannot run now. Retry later, or use "mode": "hybrid" or "lexical"; you were not charged.',
  },
  VECTOR_INDEX_LOADING: {
    status: 503,
    message:
      'The vector index is still being built after a start, so a semantic query cannot run yet. Retry later, or use "mode": "hybrid" or "lexical"; you were not charged.',
  },
  INDEX_LOADING: { status: 503, message: 'The search index is still loading after a restart. Retry in a few seconds; you were not charged.' },
  STORE_UNAVAILABLE: { status: 503, message: 'The data store is not available right now. Retry with exponential backoff.' },
  ADMIN_TOKEN_REQUIRED: {
    status: 401,
    message:
      'The admin API needs Authorization: Bearer <token>. Create a token on the service\'s machine with "npx metered-search admin tokens create --name <who uses it>".',
  },
  UNKNOWN_ADMIN_TOKEN: { status: 401, message: 'The admin token is not recognised, or was revoked.' },
  MISSING_SCOPE: { status: 403, message: 'This admin token lacks the scope this request needs.' },
  KEY_NOT_FOUND: { status: 404, message: 'No key has this id.' },
  ACCOUNT_NOT_FOUND: { status: 404, message: 'No account has this id.' },
  PORTAL_SIGN_IN_REQUIRED: {
    status: 401,
    message: 'Sign in to the portal: send your API key in the x-api-key header, or open a portal link from your provider.',
  },
  PORTAL_FORMER_KEY: {
    status: 401,
    message:
      'This API key was rolled: in its grace period it still answers API calls, but never signs in to the portal. Sign in with the current key.',
  },
  PORTAL_OTHER_KEY: {
    status: 403,
    message:
      "Signed in with an API key, you may rename and roll only that key. To manage every key of the account, open the portal from your provider's website. Nothing was changed.",
  },
  CSRF_REJECTED: {
    status: 403,
    message: 'This request did not come from the portal page: it lacks the x-csrf-token header of the session. Nothing was changed.',
  },
  PUBLIC_URL_REQUIRED: {
    status: 409,
    message:
      'Portal links open on the public listener, whose address this admin listener (ADMIN_PORT) cannot know: set PUBLIC_URL to the origin customers reach the service at. No link was made.',
  },
  PACK_NOT_FOUND: { status: 404, message: 'No credit pack has this id.' },
  CHECKOUT_UNAVAILABLE: {
    status: 404,
    message: 'Buying credits is not set up on this service: ask the operator who gave you your API key for credits.',
  },
  CHECKOUT_FAILED: { status: 502, message: 'The payment provider did not create the checkout. Nothing was charged; try again in a moment.' },
  EXTERNAL_ID_TAKEN: { status: 409, message: 'Another account has this external_id: each account has its own.' },
  WEBHOOK_NOT_FOUND: { status: 404, message: 'No webhook endpoint has this id.' },
  DELIVERY_NOT_FOUND: { status: 404, message: 'No webhook delivery has this id.' },
  KEY_REVOKED: { status: 409, message: 'The key is revoked, which is permanent: it cannot be changed. Create a new key instead.' },
  BALANCE_LIMIT: { status: 422, message: 'The balance would pass the most an account may hold (10^12 credits). Nothing was added.' },
  STORAGE_FULL: { status: 503, message: 'The data store cannot write: its storage is full. Nothing was charged; retry with exponential backoff.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** A fault or rejection that ends the request with an envelope. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message?: string,
    options: { status?: number; headers?: Record<string, string>; extra?: Record<string, unknown>; cause?: Error } = {},
  ) {
    super(message ?? errorCatalogue[code].message, options.cause && { cause: options.cause });
    this.code = code;
    this.status = options.status ?? errorCatalogue[code].status;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

export interface Envelope {
  status: number;
  message: string;
  [field: string]: unknown;
}

export function envelope(status: number, message: string, extra: Record<string, unknown> = {}): Envelope {
  return { status, message, ...extra };
}
