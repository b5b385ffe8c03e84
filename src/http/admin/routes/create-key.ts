import type { FastifyInstance } from 'fastify';
import { MAX_BALANCE } from '../../../billing/ledger.js';
import type { SpendCap } from '../../../billing/spend-caps.js';
import type { Services } from '../../../services/services.js';
import { plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminKeyOf, keyLifeOf, keysFor } from '../keys.js';
import { adminKey, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, keyLifeProperties } from '../schemas.js';

const schema = {
  summary: 'Create an API key',
  description: 'The plain key is in this answer only; it is stored hashed.',
  operationId: 'adminCreateKey',
  tags: ['admin'],
  security: adminSecurity,
  body: {
    type: 'object',
    required: ['credits'],
    additionalProperties: false,
    properties: {
      credits: { type: 'integer', minimum: 0, maximum: MAX_BALANCE },
      name: plainText({ maxLength: 200 }),
      rate: { type: ['number', 'null'], exclusiveMinimum: 0, description: "Requests per second; null or absent for the service's default." },
      ...keyLifeProperties,
    },
  },
  response: {
    201: {
      description: 'The new key.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: [...adminKey.required, 'key'],
      properties: { ...adminKey.properties, key: { type: 'string', description: 'The plain key: 64 hexadecimal characters, shown once.' } },
    },
    ...adminWriteErrorResponses,
  },
} as const;

export function createKeyRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.post('/admin/keys', { schema, ...hooks }, async (request, reply) => {
    const body = request.body as {
      credits: number;
      name?: string;
      rate?: number | null;
      expires_at?: string | null;
      metadata?: Record<string, unknown> | null;
      spend_caps?: SpendCap[] | null;
    };
    const life = keyLifeOf(body, services.clock());
    const { key, record } = await keysFor(services, request).create(body.credits, body.name ?? '', body.rate ?? null, life);
    services.metrics?.grant(body.credits);
    return reply.code(201).send({ ...adminKeyOf(record), key });
  });
}
