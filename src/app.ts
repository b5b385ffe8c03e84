import { randomUUID } from 'node:crypto';
import type { HTTPMethods, onResponseHookHandler } from 'fastify';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { registerAdminRoutes } from './http/admin/index.js';
import { registerErrorHandling } from './http/error-handler.js';
import { nullAsAbsent, registerJsonBodies } from './http/json-body.js';
import { registerDocsPage, registerOpenApi } from './http/openapi.js';
import { registerPortal } from './http/portal/index.js';
import { answerUnmetExpectation, clientErrorHandler, frameworkErrorHandler } from './http/protocol-errors.js';
import { registerRoutes } from './http/routes/index.js';
import { registerPage } from './http/static-page.js';
import type { Metrics } from './metrics/metrics.js';
import type { AppSettings, Services } from './services/services.js';

export interface AppOptions {
  settings: AppSettings;
  logger?: FastifyServerOptions['logger'];
  https?: { cert: Buffer; key: Buffer };
  /**
   * Which routes this app serves: all of them (the default), the public API only, or the admin API
   * (with /metrics) only, for a listener of its own (ADMIN_PORT).
   */
  plane?: 'all' | 'public' | 'admin';
}

/** Anything shaped like an API key, wherever a caller put it (a path, a query string). */
const KEY_SHAPED = /[0-9a-f]{64}/gi;
/** A portal link's token (/portal/sign-in?token=…): whoever reads the log could open the portal with it. */
const TOKEN_PARAMETER = /([?&]token=)[^&#]*/gi;

/** Log options: request ids on every line; API keys and bodies (images) never logged. */
export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.body'], censor: '[redacted]' },
    serializers: {
      req: (request: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
        method: request.method,
        url: request.url.replace(KEY_SHAPED, '[redacted]').replace(TOKEN_PARAMETER, '$1[redacted]'),
        host: request.host,
        remoteAddress: request.ip,
        remotePort: request.socket?.remotePort,
      }),
    },
  };
}

/** TRUST_PROXY for Fastify, whose types take a number of hops as a function of the hop. */
function trustProxyOption(trust: AppSettings['trustProxy']): FastifyServerOptions['trustProxy'] {
  return typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
}

/** An onResponse hook counting a route's answers by status, with their time. */
function countAnswers(metrics: Metrics, route: string, methods: string[]): onResponseHookHandler {
  const recorders = new Map(methods.map((method) => [method, metrics.requests(route, method)]));
  return (request, reply, done) => {
    let record = recorders.get(request.method);
    if (!record) {
      record = metrics.requests(route, request.method);
      recorders.set(request.method, record);
    }
    record(reply.statusCode, reply.elapsedTime / 1000);
    done();
  };
}

/** Builds the whole HTTP app from injected services. Never listens and never reads the environment. */
export async function buildApp(services: Services, options: AppOptions): Promise<FastifyInstance> {
  const { timeouts } = options.settings;
  const serverLimits = {
    headersTimeout: timeouts.headersMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(timeouts.headersMs / 2))),
  };
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.settings.bodyLimitBytes,
    genReqId: () => randomUUID(),
    // Ids come from us only: a caller-chosen id could forge or flood log lines.
    requestIdHeader: false,
    // X-Forwarded-For and -Proto are believed only from the proxies TRUST_PROXY names.
    trustProxy: trustProxyOption(options.settings.trustProxy),
    // Each route's schema is the contract: no type coercion ("5" stays a string and fails an integer
    // field), and unknown fields are kept, because /face/search forwards them.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false, allowUnionTypes: true } },
    // A client that trickles its headers or body, or idles on a kept-alive connection, is cut off
    // after these limits; Node checks them every connectionsCheckingInterval.
    requestTimeout: timeouts.requestMs,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    keepAliveTimeout: timeouts.keepAliveMs,
    ...(options.https ? { https: { ...options.https, ...serverLimits } } : { http: serverLimits }),
  }) as unknown as FastifyInstance;

  app.server.on('checkExpectation', answerUnmetExpectation);

  // JSON only: without the text/plain parser, any other Content-Type is rejected (400, docs/api.md).
  app.removeContentTypeParser(['text/plain']);
  registerJsonBodies(app);

  const routeMethods = new Map<string, Set<HTTPMethods>>();
  const { metrics } = services;
  // The app's close stops what its services poll (the synonym rules' version).
  app.addHook('onClose', () => services.synonyms.close());
  app.addHook('onRoute', (route) => {
    const methods = routeMethods.get(route.url) ?? new Set<HTTPMethods>();
    for (const method of [route.method].flat()) methods.add(method as HTTPMethods);
    routeMethods.set(route.url, methods);
    // Each route counts its own answers with its declared URL fixed here: reading the URL per
    // request (request.routeOptions builds an object) cost 2% of /credits (bench:api).
    if (metrics) route.onResponse = [...[route.onResponse ?? []].flat(), countAnswers(metrics, route.url, [route.method].flat())];
    const dropNulls = route.url.startsWith('/admin/') ? nullAsAbsent(route) : undefined;
    if (dropNulls) route.preValidation = [dropNulls, ...[route.preValidation ?? []].flat()];
  });
  // Set first thing, so that every answer carries it, errors included: Fastify keeps headers set
  // on the reply when an error handler takes over.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  const countUnmatched = metrics && countAnswers(metrics, 'unmatched', []);
  registerErrorHandling(app, routeMethods, (request, reply) => countUnmatched?.call(app, request, reply, () => undefined));

  await registerOpenApi(app, options.settings.serviceVersion);
  const plane = options.plane ?? 'all';
  if (plane !== 'admin') {
    await registerRoutes(app, services, options.settings);
    registerPortal(app, services, options.settings);
  }
  if (plane !== 'public') {
    await registerAdminRoutes(app, services, options.settings, { servesPortal: plane === 'all' });
    registerPage(app, 'console');
  }

  await registerDocsPage(app);
  return app;
}
