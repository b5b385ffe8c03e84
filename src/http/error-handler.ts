import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { ApiError, envelope, errorCatalogue } from '../errors.js';
import { StoreFullError, storeFault, UnstorableValueError, valueFault } from '../platform/store-faults.js';
import { NO_CONTROL_CHARACTERS } from './schemas/common.js';

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

const HEADER_MESSAGES: Record<string, string> = {
  'x-api-key:missing': errorCatalogue.MISSING_API_KEY.message,
  'x-api-key:invalid': errorCatalogue.MALFORMED_API_KEY.message,
  'svc-doc-id:missing': errorCatalogue.MISSING_DOC_ID.message,
  'svc-doc-id:invalid': errorCatalogue.MISSING_DOC_ID.message,
  'idempotency-key:invalid': errorCatalogue.INVALID_IDEMPOTENCY_KEY.message,
};

/**
 * The field an AJV issue is about: a missing property's name, else the first segment of its path;
 * `at`, the whole path as a reader writes it (spend_caps[0].credits).
 */
function fieldOf(issue: ValidationIssue): { field: string; missing: boolean; at: string } {
  const missing = issue.keyword === 'required';
  const path = issue.instancePath.split('/').filter(Boolean);
  const field = missing ? String((issue.params as { missingProperty?: string }).missingProperty ?? '') : (path[0] ?? '');
  const at = path.map((segment, index) => (/^\d+$/.test(segment) ? `[${segment}]` : index === 0 ? segment : `.${segment}`)).join('');
  return { field: path.length > 0 && missing ? path[0] : field, missing, at: at || field };
}

function validationMessage(error: FastifyError, request: FastifyRequest): string {
  const issue = error.validation![0];
  const { field, missing, at } = fieldOf(issue);
  const where = error.validationContext === 'querystring' ? 'query parameter' : error.validationContext === 'params' ? 'path segment' : 'field';
  if (issue.keyword === 'pattern' && (issue.params as { pattern?: string }).pattern === NO_CONTROL_CHARACTERS) {
    return `The ${where} ${field} must not hold control characters (such as NUL, ESC, a line break or a bidirectional override) or an unpaired surrogate.`;
  }
  if (issue.keyword === 'additionalProperties') {
    const extra = (issue.params as { additionalProperty?: string }).additionalProperty;
    const at = issue.instancePath === '' ? '' : ` in ${issue.instancePath.slice(1).replaceAll('/', '.')}`;
    return `Unknown ${where} "${extra}"${at}: remove it. See GET /docs for the fields this endpoint takes.`;
  }
  if (error.validationContext === 'headers') {
    const known = HEADER_MESSAGES[`${field}:${missing ? 'missing' : 'invalid'}`];
    if (known) return known;
    return `The ${field} header ${missing ? 'is required' : issue.message}.`;
  }
  const messages = request.routeOptions.config.fieldMessages ?? {};
  if (error.validationContext === 'body') {
    if (issue.instancePath === '' && !missing) {
      return messages[''] ?? 'The body must be a JSON object sent with Content-Type: application/json.';
    }
    if (messages[field]) return messages[field];
  }
  return `Invalid ${error.validationContext ?? 'request'}: ${at || 'value'} ${issue.message ?? 'is invalid'}.`;
}

/** Fastify's own errors, as the envelope's status and a message telling the caller what to fix. */
function frameworkError(error: FastifyError, request: FastifyRequest): { status: number; message: string } | undefined {
  if (error.validation) return { status: 400, message: validationMessage(error, request) };
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, message: errorCatalogue.WRONG_CONTENT_TYPE.message };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'The body is empty: send a JSON object.' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return { status: 400, message: errorCatalogue.INVALID_JSON.message };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: errorCatalogue.BODY_TOO_LARGE.status,
        message: `The request body is larger than the limit of ${request.server.initialConfig.bodyLimit} bytes (BODY_LIMIT_BYTES).`,
      };
  }
  if (error instanceof SyntaxError || error.statusCode === 400) {
    return { status: 400, message: `${errorCatalogue.INVALID_JSON.message} ${error.message}`.trim() };
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, message: error.message };
  }
  return undefined;
}

/**
 * The methods a request path has routes for, a path of parameters (/admin/keys/:id) matching any
 * value in each segment; undefined when none does. Patterns are read when first asked: routes are
 * all declared by then.
 */
function methodsByPath(routeMethods: Map<string, Set<HTTPMethods>>): (path: string) => Set<HTTPMethods> | undefined {
  let patterns: Array<{ pattern: RegExp; methods: Set<HTTPMethods> }> | undefined;
  return (path) => {
    const exact = routeMethods.get(path);
    if (exact) return exact;
    patterns ??= [...routeMethods]
      .filter(([url]) => url.includes('/:'))
      .map(([url, methods]) => ({ pattern: new RegExp(`^${url.split('/').map(segmentPattern).join('/')}$`), methods }));
    const matched = patterns.filter(({ pattern }) => pattern.test(path)).flatMap(({ methods }) => [...methods]);
    return matched.length > 0 ? new Set(matched) : undefined;
  };
}

const segmentPattern = (segment: string) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

/**
 * The error handler and the answer to requests no route takes. `countUnrouted` is told of those
 * (their status set), since no route's hooks run for them.
 */
export function registerErrorHandling(
  app: FastifyInstance,
  routeMethods: Map<string, Set<HTTPMethods>>,
  countUnrouted: (request: FastifyRequest, reply: FastifyReply) => void,
): void {
  const allowedOn = methodsByPath(routeMethods);
  /** No route for this method and path: 405 with Allow when the path has routes, else 404. */
  const unrouted = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0];
    const allowed = allowedOn(path);
    if (allowed && !allowed.has(request.method as HTTPMethods)) {
      const allow = [...allowed].sort().join(', ');
      const { status } = errorCatalogue.METHOD_NOT_ALLOWED;
      countUnrouted(request, reply.code(status));
      return reply.header('allow', allow).send(envelope(status, `Method ${request.method} is not allowed on ${path}. Allowed: ${allow}.`));
    }
    const { status } = errorCatalogue.NOT_FOUND;
    countUnrouted(request, reply.code(status));
    return reply.send(envelope(status, `No endpoint at ${request.method} ${path}. See GET /docs for the API.`));
  };

  app.setErrorHandler((error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    // A body that fails to parse on a path or method with no route: the route's absence is the answer.
    if (request.is404) return unrouted(request, reply);
    if (error instanceof ApiError) {
      // A 503 is an expected refusal (loading, a downstream down): one warn line, with its cause and no stack.
      if (error.status === 503) request.log.warn({ code: error.code, cause: (error.cause as Error | undefined)?.message }, error.message);
      else if (error.status >= 500) request.log.error({ err: error }, error.message);
      return reply
        .code(error.status)
        .headers(error.headers)
        .send(envelope(error.status, error.message, error.extra));
    }
    const known = frameworkError(error, request);
    if (known) return reply.code(known.status).send(envelope(known.status, known.message));
    if (error instanceof UnstorableValueError) {
      const { status } = errorCatalogue.BAD_REQUEST;
      return reply.code(status).send(envelope(status, `${error.message}: remove it and send the request again. Nothing was changed.`));
    }
    const badValue = valueFault(error);
    if (badValue) {
      const { status } = errorCatalogue.BAD_REQUEST;
      return reply.code(status).send(envelope(status, `The request holds ${badValue}. Nothing was changed: correct the value and send it again.`));
    }
    const fault = storeFault(error);
    if (fault instanceof StoreFullError) {
      request.log.error({ err: error }, 'storage full');
      const { status, message } = errorCatalogue.STORAGE_FULL;
      return reply.code(status).header('retry-after', '5').send(envelope(status, message));
    }
    if (fault) {
      request.log.warn({ err: error }, 'store unavailable');
      const { status, message } = errorCatalogue.STORE_UNAVAILABLE;
      return reply.code(status).header('retry-after', '1').send(envelope(status, message));
    }
    request.log.error({ err: error }, 'unexpected error');
    const { status, message } = errorCatalogue.INTERNAL;
    return reply.code(status).send(envelope(status, `${message} Quote request id ${request.id} when reporting it; retry with exponential backoff.`));
  });

  app.setNotFoundHandler(unrouted);
}
