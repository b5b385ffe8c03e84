import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.js';
import { errorResponse, freeErrorResponses, noSecurity, successHeaders } from '../schemas/common.js';

const ok = {
  description: 'Healthy.',
  headers: successHeaders('free'),
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'integer' } },
} as const;

const healthSchema = {
  summary: 'Liveness: the process answers',
  description: 'Asks nothing of any dependency.',
  operationId: 'getHealth',
  tags: ['free'],
  security: noSecurity,
  response: { 200: ok, ...freeErrorResponses },
} as const;

const readySchema = {
  summary: 'Readiness: the store answers, the search index is loaded and the face engine is warm',
  description: 'For a load balancer: 503, with what is not ready, while this instance should get no traffic.',
  operationId: 'getReady',
  tags: ['free'],
  security: noSecurity,
  response: { 200: ok, 503: errorResponse('Not ready: the message says what is not.'), ...freeErrorResponses },
} as const;

/** GET /healthz and GET /readyz, for orchestrators' probes; free, no key. */
export function healthRoutes(app: FastifyInstance, services: Services): void {
  let faceWarm = services.face?.ready === undefined;
  // A failed load leaves it not ready: every face search would fail too.
  services.face?.ready?.then(
    () => {
      faceWarm = true;
    },
    () => undefined,
  );
  app.get('/healthz', { schema: healthSchema }, async () => ({ status: 200 }));
  app.get('/readyz', { schema: readySchema }, async (_request, reply) => {
    const notReady = (message: string) => reply.code(503).send({ status: 503, message });
    try {
      await services.store.ping();
    } catch {
      return notReady('The data store does not answer.');
    }
    if (!services.search.ready) return notReady('The search index is still loading.');
    if (!faceWarm) return notReady('The face engine is still loading its models.');
    return { status: 200 };
  });
}
