import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import type { SearchRequest } from '../../search/search-request.js';
import type { SearchService } from '../../search/search-service.js';
import type { Step } from '../steps.js';

/** The header a hybrid query answered by words alone carries, its embedding having failed. */
export const FALLBACK_HEADER = 'x-search-fallback';

/** How long a caller should wait before a semantic query again after the embedder failed. */
const RETRY_AFTER_S = '5';
/** The same while the vector index is built after a start: minutes at a million vectors. */
const VECTORS_RETRY_AFTER_S = '30';

const NOT_SENT = {
  busy: 'Too many semantic queries are waiting for the embedding model right now (EMBEDDINGS_CONCURRENCY).',
  'breaker-open': 'The embedding model failed repeatedly and is not being called for a few seconds.',
};

/**
 * Embeds a semantic or hybrid query's prompt before the charge, so that a refusal costs nothing:
 * no embedder configured is a 400; an embedder failing, busy, or the vector index still being
 * built after a start, makes `semantic` a 503 and `hybrid` a lexical search that says so
 * (FALLBACK_HEADER), both uncharged. `payable` runs first: what the charge would refuse (401,
 * 403, 402, 429) never reaches the model.
 */
export function embedPromptStep(search: SearchService, payable: Step): Step {
  return async (request, reply) => {
    const query = request.search as SearchRequest;
    if (query.mode === 'lexical') return;
    const embeddings = search.embeddings;
    if (!embeddings) throw new ApiError('SEMANTIC_NOT_CONFIGURED');
    await payable(request, reply);
    if (!search.semanticReady) {
      const error = new ApiError('VECTOR_INDEX_LOADING', undefined, { headers: { 'retry-after': VECTORS_RETRY_AFTER_S } });
      return withoutVector(request, reply, error, 'the vector index is still being built');
    }
    const embedded = await embeddings.vectorOf(query.text);
    if (embedded.outcome === 'embedded') {
      request.search = { ...query, vector: embedded.vector };
      return;
    }
    const cause = embedded.outcome === 'failed' ? embedded.error : new Error(NOT_SENT[embedded.outcome]);
    const message =
      embedded.outcome === 'failed' ? undefined : `${cause.message} Retry later, or use "mode": "hybrid" or "lexical"; you were not charged.`;
    const error = new ApiError('EMBEDDER_UNAVAILABLE', message, { headers: { 'retry-after': RETRY_AFTER_S }, cause });
    return withoutVector(request, reply, error, cause.message);
  };
}

/**
 * A prompt that got no vector: a semantic query is refused with `error`; a hybrid one is answered
 * by its words, says so, and is not charged.
 */
function withoutVector(request: FastifyRequest, reply: FastifyReply, error: ApiError, why: string): void {
  const query = request.search as SearchRequest;
  if (query.mode === 'semantic') throw error;
  request.log.warn({ cause: why }, 'a hybrid query answered lexically, uncharged');
  request.search = { ...query, mode: 'lexical' };
  request.uncharged = true;
  reply.header(FALLBACK_HEADER, 'lexical');
}
