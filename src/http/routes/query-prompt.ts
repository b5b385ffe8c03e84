import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import type { SearchMode, SearchService } from '../../search/search-service.js';
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
 * 403, 402, 429) never reaches the model. Sets the mode the request is priced as.
 */
export function embedPromptStep(
  search: SearchService,
  promptOf: (body: unknown) => { mode: 'lexical' } | { mode: Exclude<SearchMode, 'lexical'>; text: string },
  payable: Step,
): Step {
  return async (request, reply) => {
    const prompt = promptOf(request.body);
    if (prompt.mode === 'lexical') return;
    const { mode, text } = prompt;
    const embeddings = search.embeddings;
    if (!embeddings) throw new ApiError('SEMANTIC_NOT_CONFIGURED');
    request.pricedMode = `/query:${mode}`;
    await payable(request, reply);
    if (!search.semanticReady) {
      if (mode === 'semantic') throw new ApiError('VECTOR_INDEX_LOADING', undefined, { headers: { 'retry-after': VECTORS_RETRY_AFTER_S } });
      return answerLexically(request, reply, 'the vector index is still being built');
    }
    const embedded = await embeddings.vectorOf(text);
    if (embedded.outcome === 'embedded') {
      request.prompt = { mode, vector: embedded.vector };
      return;
    }
    const cause = embedded.outcome === 'failed' ? embedded.error : new Error(NOT_SENT[embedded.outcome]);
    if (mode === 'hybrid') return answerLexically(request, reply, cause.message);
    const message =
      embedded.outcome === 'failed' ? undefined : `${cause.message} Retry later, or use "mode": "hybrid" or "lexical"; you were not charged.`;
    throw new ApiError('EMBEDDER_UNAVAILABLE', message, { headers: { 'retry-after': RETRY_AFTER_S }, cause });
  };
}

/** A hybrid query whose prompt has no vector: answered by its words, says so, and is not charged. */
function answerLexically(request: FastifyRequest, reply: FastifyReply, why: string): void {
  request.log.warn({ cause: why }, 'a hybrid query answered lexically, uncharged');
  request.pricedMode = undefined;
  request.uncharged = true;
  reply.header(FALLBACK_HEADER, 'lexical');
}
