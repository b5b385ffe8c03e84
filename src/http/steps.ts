import type { FastifyReply, FastifyRequest, onResponseHookHandler, onSendHookHandler, preHandlerHookHandler } from 'fastify';

/** A step of a route's checks, in the order the route declares them; it answers or throws to stop there. A promise only when it has to wait: most requests pass most steps synchronously. */
export type Step = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | undefined;

/** The hooks a route is declared with: its steps as one preHandler, and what runs after the handler. */
export interface RouteHooks {
  preHandler: preHandlerHookHandler;
  onSend?: onSendHookHandler;
  onResponse?: onResponseHookHandler;
}

/** The steps as one hook: one hook call per request rather than one per step. */
export function inOrder(steps: Step[]): preHandlerHookHandler {
  return async function runSteps(request, reply) {
    for (const step of steps) {
      const pending = step(request, reply);
      if (pending) await pending;
      if (reply.sent) return reply;
    }
  };
}
