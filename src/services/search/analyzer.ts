/** Lucene's English stopword list (the 33 words decisions.md 13 names). */
export const STOPWORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not',
  'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was',
  'will', 'with',
]);

// The same token characters as FTS5's unicode61 tokenizer: letters, numbers, marks, private use.
const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

/** Caps the work one request can cause; a query longer than this many terms keeps its first ones. */
export const MAX_QUERY_TERMS = 64;

/**
 * Query text to search terms: split into words, lower-cased, stopwords dropped, duplicates removed.
 * Stemming happens in the index's tokenizer (Porter), which also stems each quoted term.
 */
export function analyze(text: string): string[] {
  const terms = new Set<string>();
  for (const [token] of text.normalize('NFKC').toLowerCase().matchAll(TOKEN)) {
    if (!STOPWORDS.has(token)) terms.add(token);
    if (terms.size === MAX_QUERY_TERMS) break;
  }
  return [...terms];
}
