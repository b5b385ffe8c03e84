import { queryTokens } from './engine/analysis.js';

export { STOPWORDS } from './engine/analysis.js';

/** Caps the work one request can cause; a query longer than this many terms keeps its first ones. */
export const MAX_QUERY_TERMS = 64;

/**
 * Query text to search terms: the index's tokens (NFKC, lower case, Latin diacritics removed),
 * stopwords dropped, duplicates removed. Stemming happens in the index, the same as for documents.
 */
export function analyze(text: string): string[] {
  return queryTokens(text, MAX_QUERY_TERMS);
}
