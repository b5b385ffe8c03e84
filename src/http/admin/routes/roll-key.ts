import type { FastifyInstance } from 'fastify';
import { MAX_ROLL_GRACE_SECONDS, type RollOutcome } from '../../../billing/key-admin.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idempotencyKeyHeader, idParams, responseHeaders } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { idempotentChange } from '../idempotent-change.js';
import { adminKeyOf, keysFor } from '../keys.js';
import { adminKey, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses } from '../schemas.js';

const schema = {
  summary: 'Roll a key: a new plain key for the same id',
  description:
    'The key keeps its id, balance, rate and history; the new plain key is in this answer only. The former key keeps working ' +
    'for grace_seconds, then answers 401. Send an Idempotency-Key and repeat it on retries: a retry is answered from the first ' +
    'request, with the same new key, and rolls nothing more (the answer is kept as long as IDEMPOTENCY_TTL_S). Without one, a ' +
    'retry rolls again: the key from the lost answer is then a former key too, valid for its own grace period.',
  operationId: 'adminRollKey',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  headers: { type: 'object', properties: { 'idempotency-key': idempotencyKeyHeader } },
  body: {
    type: 'object',
    required: ['grace_seconds'],
    additionalProperties: false,
    properties: {
      grace_seconds: {
        type: 'integer',
        minimum: 0,
        maximum: MAX_ROLL_GRACE_SECONDS,
        description: 'How long the former key keeps working, in seconds (0: it stops at once; at most a week).',
      },
    },
  },
  response: {
    200: {
      description: 'The key with its new plain key.',
      headers: { ...adminSuccessHeaders, 'idempotent-replayed': responseHeaders.charged['idempotent-replayed'] },
      type: 'object',
      required: [...adminKey.required, 'key', 'old_key_valid_until'],
      properties: {
        ...adminKey.properties,
        key: { type: 'string', description: 'The new plain key: 64 hexadecimal characters, shown once.' },
        old_key_valid_until: {
          type: ['string', 'null'],
          format: 'date-time',
          description: 'When the former key stops working; null: it already has.',
        },
      },
    },
    404: errorResponse('No key has this id.'),
    409: errorResponse('The key is revoked, which is permanent; or a request with this Idempotency-Key is still running.'),
    422: errorResponse('This Idempotency-Key was used for a different request.'),
    ...adminWriteErrorResponses,
  },
} as const;

function answerOf(id: string, result: RollOutcome) {
  if (result.outcome === 'not-found') return new ApiError('KEY_NOT_FOUND', `No key has id "${id}".`);
  if (result.outcome === 'revoked') return new ApiError('KEY_REVOKED');
  return { ...adminKeyOf(result.record), key: result.key, old_key_valid_until: result.oldKeyValidUntil };
}

export function rollKeyRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.post('/admin/keys/:id/roll', { schema, ...hooks }, async (request, reply) => {
    const id = (request.params as { id: string }).id;
    const graceSeconds = (request.body as { grace_seconds: number }).grace_seconds;
    return idempotentChange<RollOutcome, ReturnType<typeof answerOf>>(
      services,
      request,
      reply,
      (answering) => keysFor(services, request).roll(id, graceSeconds, answering),
      (result) => {
        services.credits.forget(id);
        return answerOf(id, result);
      },
    );
  });
}
