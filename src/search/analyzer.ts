import { queryTokens } from './engine/analysis.js';
import { ENGLISH, type Language } from './engine/languages.js';

export { type Language, languageNamed } from './engine/languages.js';

/** Caps the work one request can cause; a query longer than this many terms keeps its first ones. */
export const MAX_QUERY_TERMS = 64;

/**
 * Query text to search terms: the index's tokens (NFKC, lower case, Latin diacritics removed), the
 * language's stopwords dropped, duplicates removed. Stemming happens in the index, the same as
 * for documents.
 */
export function analyze(text: string, language: Language = ENGLISH): string[] {
  return queryTokens(text, MAX_QUERY_TERMS, language);
}
