import type { FastifyRequest } from 'fastify';

/** The origin callers reach the service at: PUBLIC_URL, else the request's own. */
export function publicOrigin(request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}
