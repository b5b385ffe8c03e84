import type { FastifyInstance } from 'fastify';
import type { SearchRequest } from '../../../search/search-request.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, responseHeaders } from '../../schemas/common.js';
import { FALLBACK_HEADER } from '../../search/embed-prompt.js';
import { searchAnswerOf, searchAnswerSchema, searchBodySchema, searchFieldMessages } from '../../search/search-body.js';
import type { RouteHooks } from '../../steps.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders } from '../schemas.js';

const schema = {
  summary: 'Search the corpus, as callers do',
  description:
    "The body POST /query takes, answered with what /query's `resp.body` holds: the same ranking, totals, facets, fields and highlights. Free and not recorded as any key's usage: for the operator's own checks and the console.",
  operationId: 'adminSearch',
  tags: ['admin'],
  security: adminSecurity,
  body: searchBodySchema,
  response: {
    200: {
      description: 'The matches, best first, and how many there are in all.',
      headers: {
        ...adminSuccessHeaders,
        [FALLBACK_HEADER]: { type: 'string', description: '"lexical" when a hybrid search was answered by words alone.' },
      },
      ...searchAnswerSchema,
    },
    ...adminErrorResponses,
    503: errorResponse(
      'The search index is still loading after a start, or (semantic) the embedding model did not answer; retry after Retry-After.',
      responseHeaders.retryAfter,
    ),
  },
} as const;

/** POST /admin/search (scope documents:read): its steps read the body into request.search and embed a prompt. */
export function adminSearchRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.post('/admin/search', { schema, config: { fieldMessages: searchFieldMessages }, ...hooks }, async (request) => {
    const result = await services.search.search(request.search as SearchRequest);
    return searchAnswerOf(result);
  });
}
