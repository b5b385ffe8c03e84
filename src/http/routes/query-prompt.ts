import { ApiError } from '../../errors.js';
import type { SearchMode, SearchService } from '../../search/search-service.js';
import type { Step } from '../steps.js';

/** The header a hybrid query answered by words alone carries, its embedding having failed. */
export const FALLBACK_HEADER = 'x-search-fallback';

/** How long a caller should wait before a semantic query again after the embedder failed. */
const RETRY_AFTER_S = '5';
/** The same while the vector index is built after a start: minutes at a million vectors. */
const VECTORS_RETRY_AFTER_S = '30';

/**
 * Embeds a semantic or hybrid query's prompt before the charge, so that a refusal costs nothing:
 * no embedder configured is a 400; an embedder failing, or the vector index still being built
 * after a start, makes `semantic` a 503 and `hybrid` a lexical search that says so
 * (FALLBACK_HEADER). Sets the mode the request is priced as.
 */
export function embedPromptStep(
  search: SearchService,
  promptOf: (body: unknown) => { mode: 'lexical' } | { mode: Exclude<SearchMode, 'lexical'>; text: string },
): Step {
  return (request, reply) => {
    const prompt = promptOf(request.body);
    if (prompt.mode === 'lexical') return undefined;
    const { mode, text } = prompt;
    const embeddings = search.embeddings;
    if (!embeddings) throw new ApiError('SEMANTIC_NOT_CONFIGURED');
    if (!search.semanticReady) {
      if (mode === 'semantic') throw new ApiError('VECTOR_INDEX_LOADING', undefined, { headers: { 'retry-after': VECTORS_RETRY_AFTER_S } });
      reply.header(FALLBACK_HEADER, 'lexical');
      return undefined;
    }
    return embeddings.vectorOf(text).then(
      (vector) => {
        request.prompt = { mode, vector };
        request.pricedMode = `/query:${mode}`;
      },
      (error: Error) => {
        request.log.warn({ err: error }, 'the embedder failed on a query prompt');
        if (mode === 'semantic') throw new ApiError('EMBEDDER_UNAVAILABLE', undefined, { headers: { 'retry-after': RETRY_AFTER_S } });
        reply.header(FALLBACK_HEADER, 'lexical');
      },
    );
  };
}
