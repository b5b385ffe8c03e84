import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../../metrics/metrics.js';
import { errorResponse, responseHeaders } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminSecurity } from '../schemas.js';

/** GET /metrics: the Prometheus text format. Needs an admin token, read-only enough, unless METRICS_PUBLIC. */
export function metricsRoute(app: FastifyInstance, metrics: Metrics, hooks: Partial<RouteHooks>, open: boolean): void {
  const schema = {
    summary: 'Metrics, in the Prometheus text format',
    description:
      'Requests by route and status, latency by route, debits by outcome, credits granted, idempotent replays, 429s, documents, the PostgreSQL pool and the process. No label carries a key, a token or a document id.',
    operationId: 'getMetrics',
    tags: ['admin'],
    security: open ? [] : adminSecurity,
    response: {
      200: {
        description: 'The metrics, in the Prometheus text format (version 0.0.4).',
        headers: responseHeaders.requestId,
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      401: errorResponse('No admin token, a malformed one, or one unknown or revoked.'),
      403: errorResponse('The admin token lacks the scope metrics:read.'),
      500: errorResponse('Unexpected error; the x-request-id header identifies it in the logs.'),
    },
  } as const;
  app.get('/metrics', { schema, ...hooks }, async (_request, reply) => {
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
