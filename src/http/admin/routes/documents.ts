import type { FastifyInstance } from 'fastify';
import type { AdminTokenRecord } from '../../../admin/admin-store.js';
import type { DocumentRecord } from '../../../documents/document-store.js';
import { documentsOfArray, documentsOfJsonLines, IngestError } from '../../../documents/ingest.js';
import { EmbedderError } from '../../../embeddings/embedder.js';
import { ApiError } from '../../../errors.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses, deletedResponse } from '../schemas.js';

const JSON_LINES = ['application/x-ndjson', 'application/jsonl'];

const docIdParams = {
  type: 'object',
  required: ['doc_id'],
  properties: { doc_id: plainText({ minLength: 1 }) },
} as const;

const ingestSchema = {
  summary: 'Ingest documents',
  description:
    'A JSON array (application/json) or JSON lines (application/x-ndjson): every document or none; a bad record is named by its ' +
    'index or line. Searchable on every instance within a second.',
  operationId: 'adminIngestDocuments',
  tags: ['admin'],
  security: adminSecurity,
  response: {
    200: {
      description: 'How many documents were written.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['ingested'],
      properties: { ingested: { type: 'integer' } },
    },
    413: errorResponse('The body is larger than BODY_LIMIT_BYTES: ingest with the command line.'),
    ...adminWriteErrorResponses,
  },
} as const;

/** The ingest's body as the document gives it; the route reads it itself, naming a bad record by its index or line. */
const INGEST_BODY = {
  content: {
    'application/json': {
      schema: {
        type: 'array',
        items: {
          type: 'object',
          description: 'A document: its id (doc_id, or _id or id: required), title and text; every other field is metadata, filterable in /query.',
          properties: {
            doc_id: { type: ['string', 'number'] },
            _id: { type: ['string', 'number'] },
            id: { type: ['string', 'number'] },
            title: { type: 'string' },
            text: { type: 'string' },
          },
          additionalProperties: true,
        },
      },
    },
    'application/x-ndjson': { schema: { type: 'string', description: 'JSON lines: one document, as in the array, per line.' } },
  },
} as const;

const countSchema = {
  summary: 'How many documents there are',
  description: 'Every document stored, whether or not the search index has caught up with it.',
  operationId: 'adminCountDocuments',
  tags: ['admin'],
  security: adminSecurity,
  response: {
    200: {
      description: 'The number of documents stored.',
      headers: adminSuccessHeaders,
      type: 'object',
      required: ['count'],
      properties: { count: { type: 'integer' } },
    },
    ...adminErrorResponses,
  },
} as const;

const getSchema = {
  summary: 'One document',
  description: 'As /document answers it, free: for operators.',
  operationId: 'adminGetDocument',
  tags: ['admin'],
  security: adminSecurity,
  params: docIdParams,
  response: {
    200: {
      description: 'The document: doc_id, title, text and its metadata fields.',
      headers: adminSuccessHeaders,
      type: 'object',
      additionalProperties: true,
    },
    404: errorResponse('No document has this doc_id.'),
    ...adminErrorResponses,
  },
} as const;

const deleteSchema = {
  summary: 'Delete a document',
  description: 'It leaves search and /document on every instance within a second.',
  operationId: 'adminDeleteDocument',
  tags: ['admin'],
  security: adminSecurity,
  params: docIdParams,
  response: {
    200: deletedResponse,
    404: errorResponse('No document has this doc_id.'),
    ...adminWriteErrorResponses,
  },
} as const;

/** The body's documents, validated one by one as the ingest reads them. */
function documentsOf(body: unknown, contentType: string | undefined): Iterable<DocumentRecord> {
  const jsonLines = JSON_LINES.some((type) => contentType?.startsWith(type));
  return jsonLines ? documentsOfJsonLines(String(body)) : documentsOfArray(body);
}

async function* asynchronously(documents: Iterable<DocumentRecord>): AsyncGenerator<DocumentRecord> {
  yield* documents;
}

/** POST /admin/documents, GET and DELETE /admin/documents/{doc_id}. */
export function documentRoutes(app: FastifyInstance, services: Services, read: RouteHooks, write: RouteHooks): void {
  const { store } = services;
  app.addContentTypeParser(JSON_LINES, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  const audit = (actor: AdminTokenRecord | null, requestId: string, action: string, target: string | null, detail: Record<string, unknown>) =>
    store.admin.appendAudit({ actor: actor?.name ?? 'unknown', action, target, requestId, detail });

  // Declared in the document only: validating it here would answer AJV's messages, not the record's index or line.
  const swaggerTransform = ({ schema, url }: { schema: object; url: string }) => ({ schema: { ...schema, body: INGEST_BODY }, url });
  app.post('/admin/documents', { schema: ingestSchema, config: { swaggerTransform }, ...write }, async (request) => {
    let ingested: number;
    try {
      ingested = await store.documents.ingestDocuments(asynchronously(documentsOf(request.body, request.headers['content-type'])));
    } catch (error) {
      if (error instanceof IngestError) throw new ApiError('BAD_REQUEST', `${error.message}. Nothing was written.`);
      if (error instanceof EmbedderError) {
        throw new ApiError('EMBEDDER_UNAVAILABLE', `The documents could not be embedded: ${error.message}. Nothing was written.`, {
          headers: { 'retry-after': '5' },
        });
      }
      throw error;
    }
    await audit(request.adminToken, request.id, 'documents.ingest', null, { documents: ingested });
    return { ingested };
  });

  app.get('/admin/documents', { schema: countSchema, ...read }, async () => ({ count: await store.documents.countDocuments() }));

  app.get('/admin/documents/:doc_id', { schema: getSchema, ...read }, async (request, reply) => {
    const docId = (request.params as { doc_id: string }).doc_id;
    const json = await store.documents.getDocumentJson(docId);
    if (json === undefined) throw new ApiError('DOCUMENT_NOT_FOUND', `Document "${docId}" not found.`);
    return reply.type('application/json; charset=utf-8').send(json);
  });

  app.delete('/admin/documents/:doc_id', { schema: deleteSchema, ...write }, async (request) => {
    const docId = (request.params as { doc_id: string }).doc_id;
    if (!(await store.documents.deleteDocument(docId))) throw new ApiError('DOCUMENT_NOT_FOUND', `Document "${docId}" not found.`);
    await audit(request.adminToken, request.id, 'documents.delete', docId, {});
    return { deleted: docId };
  });
}
