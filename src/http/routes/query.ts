import type { FastifyInstance } from 'fastify';
import type { SearchRequest } from '../../search/search-request.js';
import type { Services } from '../../services/services.js';
import {
  billableErrorResponses,
  billableHeaders,
  bodyTooLargeResponse,
  errorResponse,
  responseHeaders,
  security,
  successHeaders,
} from '../schemas/common.js';
import { FALLBACK_HEADER } from '../search/embed-prompt.js';
import { searchAnswerOf, searchAnswerSchema, searchBodySchema, searchFieldMessages } from '../search/search-body.js';
import type { RouteHooks } from '../steps.js';

const schema = {
  summary: 'Full-text search (1 credit)',
  description:
    'Ranks documents by relevance (BM25 over title and text, English stemming and stopwords), or sorts every match. In the text, "quoted words" are a phrase and -word or -"a phrase" leaves out the documents holding it; any other text is plain text, and no text is an error. query may also be an Elasticsearch query object (match, match_phrase, multi_match, bool, term, terms, range, exists, ids, match_all).',
  operationId: 'postQuery',
  tags: ['billable'],
  security,
  headers: billableHeaders,
  body: searchBodySchema,
  response: {
    200: {
      description: 'The matches, best first, and how many there are in all.',
      headers: {
        ...successHeaders('billable'),
        [FALLBACK_HEADER]: {
          type: 'string',
          description:
            '"lexical" when a hybrid query was answered by words alone, the embedding model having failed or the vector index still being built after a start, or too many prompts in flight (not charged).',
        },
      },
      type: 'object',
      required: ['status', 'resp'],
      properties: {
        status: { type: 'integer' },
        resp: {
          type: 'object',
          required: ['statusCode', 'body'],
          properties: {
            statusCode: { type: 'integer' },
            body: searchAnswerSchema,
          },
        },
      },
    },
    ...billableErrorResponses,
    413: bodyTooLargeResponse,
    503: errorResponse(
      'The data store is not available, the search index is still loading after a restart, or (semantic) the embedding model did not answer or the vector index is still being built; not charged. Retry after Retry-After.',
      { ...responseHeaders.rateLimit, ...responseHeaders.retryAfter },
    ),
  },
} as const;

export function queryRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.post('/query', { schema, config: { fieldMessages: searchFieldMessages }, ...hooks }, async (request) => {
    const started = performance.now();
    const result = await services.search.search(request.search as SearchRequest);
    services.metrics?.search((performance.now() - started) / 1000);
    return { status: 200, resp: { statusCode: 200, body: searchAnswerOf(result) } };
  });
}
