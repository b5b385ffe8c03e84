import type { FastifyInstance, preValidationHookHandler, RouteOptions } from 'fastify';
import { ApiError } from '../errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../platform/json-depth.js';

/**
 * JSON bodies: Fastify's parser, with `__proto__` and `constructor.prototype` keys dropped rather
 * than refused (they are valid JSON, and ignored like any unknown field), and a depth limit.
 */
export function registerJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('remove', 'remove');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (error: Error | null, value?: unknown) => {
      if (error) return done(error, undefined);
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) return done(new ApiError('BODY_TOO_DEEP'), undefined);
      done(null, value);
    });
  });
}

/**
 * An admin route's preValidation hook that takes `null` in an optional body field that has no null of its
 * own as the field left out, as callers and generated clients send it; undefined when the route's
 * body has no such field. Fields where null means something (a rate back to the default) keep it.
 */
export function nullAsAbsent(route: RouteOptions): preValidationHookHandler | undefined {
  const body = route.schema?.body as { properties?: Record<string, { type?: string | string[] }>; required?: string[] } | undefined;
  const required = new Set(body?.required ?? []);
  const fields = Object.entries(body?.properties ?? {})
    .filter(([name, field]) => !required.has(name) && ![field.type].flat().includes('null'))
    .map(([name]) => name);
  if (fields.length === 0) return undefined;
  return (request, _reply, done) => {
    const value = request.body as Record<string, unknown> | null;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const field of fields) if (value[field] === null) delete value[field];
    }
    done();
  };
}
