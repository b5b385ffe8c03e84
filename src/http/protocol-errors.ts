import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { envelope } from '../errors.js';

/**
 * Answers to requests that never reach a route: the HTTP parser refused them, they timed out, they
 * asked for an expectation we do not meet, or their path is not a valid URL. Each is the usual
 * envelope with an x-request-id, like every other answer; logged by code only, since the raw bytes
 * the parser saw hold the caller's headers, API key included.
 */
const PARSER_ERRORS: Record<string, { status: number; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    message: 'The request did not arrive in time (REQUEST_TIMEOUT_MS / HEADERS_TIMEOUT_MS): send it whole, promptly.',
  },
  HPE_HEADER_OVERFLOW: { status: 431, message: 'The request headers are too large (over 16 KB in all): send fewer or shorter headers.' },
};
const MALFORMED = {
  status: 400,
  message:
    'The request is not valid HTTP/1.1 (bad characters in a header, a folded header, a Content-Length that does not match, or both Content-Length and Transfer-Encoding): fix the request.',
};

function rawResponse(status: number, message: string, requestId: string): string {
  const body = JSON.stringify(envelope(status, message));
  return (
    `HTTP/1.1 ${status} ${httpReason(status)}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`
  );
}

function httpReason(status: number): string {
  return { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[status] ?? 'Error';
}

/** Fastify's `clientErrorHandler`: the connection is answered (if it still can be) and closed. */
export function clientErrorHandler(this: { log: FastifyBaseLogger }, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, message } = PARSER_ERRORS[error.code ?? ''] ?? MALFORMED;
  const requestId = randomUUID();
  this.log.debug({ requestId, code: error.code, status }, 'client error');
  if (socket.writable) socket.end(rawResponse(status, message, requestId));
  else socket.destroy();
}

/** Fastify's `frameworkErrors`: a path that cannot be decoded (`GET /%zz`). */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const message =
    error.code === 'FST_ERR_BAD_URL' ? 'The path is not a valid URL: percent-encode it correctly (%zz is not an escape).' : error.message;
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  void reply.code(status).header('x-request-id', request.id).send(envelope(status, message));
}

/** Node answers an Expect header other than 100-continue with a bare 417; this gives it the envelope. */
export function answerUnmetExpectation(request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify(
    envelope(417, `Expect: ${request.headers.expect} is not supported: send the request without it, or with Expect: 100-continue.`),
  );
  response.writeHead(417, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': randomUUID(),
    connection: 'close',
  });
  response.end(body);
}
