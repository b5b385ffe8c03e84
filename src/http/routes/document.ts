import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services/services.js';
import { apiKeyHeader, billableErrorResponses, chargedResponse, idempotencyKeyHeader, security, successHeaders } from '../schemas/common.js';
import type { RouteHooks } from '../steps.js';

const schema = {
  summary: 'One document by id (1 credit)',
  description: 'Costs one credit once the headers are valid, whether or not the document exists.',
  operationId: 'getDocument',
  tags: ['billable'],
  security,
  headers: {
    type: 'object',
    required: ['x-api-key', 'svc-doc-id'],
    properties: {
      'x-api-key': apiKeyHeader,
      'idempotency-key': idempotencyKeyHeader,
      'svc-doc-id': { type: 'string', pattern: '\\S', description: 'Identifier of the document to fetch.' },
    },
  },
  response: {
    200: {
      description: 'The document.',
      headers: successHeaders('billable'),
      type: 'object',
      required: ['status', 'statusCode', 'body'],
      properties: {
        status: { type: 'integer' },
        statusCode: { type: 'integer' },
        body: {
          type: 'object',
          required: ['doc_id', 'title', 'text'],
          properties: { doc_id: { type: 'string' }, title: { type: 'string' }, text: { type: 'string' } },
          additionalProperties: true,
          description: 'The document: doc_id, title, text and its metadata fields.',
        },
      },
    },
    ...billableErrorResponses,
    404: chargedResponse('No document has this id (the credit is spent).'),
  },
} as const;

export function documentRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  // No HEAD twin: it would be charged for an answer without a body (405, like OPTIONS).
  app.get('/document', { schema, exposeHeadRoute: false, ...hooks }, async (request, reply) => {
    const docId = request.headers['svc-doc-id'] as string;
    const document = await services.store.documents.getDocumentJson(docId);
    if (document === undefined) throw new ApiError('DOCUMENT_NOT_FOUND', `Document "${docId}" not found.`);
    // The stored JSON goes out as it is: the envelope is assembled around it, not re-serialised.
    return reply.type('application/json; charset=utf-8').send(`{"status":200,"statusCode":200,"body":${document}}`);
  });
}
