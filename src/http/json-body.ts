import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

/** Levels of nested objects and arrays a body may have: deeper bodies break JSON.stringify downstream. */
export const MAX_JSON_DEPTH = 64;

/** Whether objects and arrays nest more than `limit` levels; iterative, so any depth can be judged. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}

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
