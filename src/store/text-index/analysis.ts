import { stemmer } from 'stemmer';

/** Lucene's English stopword list (the 33 words decisions.md 13 names). */
export const STOPWORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not',
  'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was',
  'will', 'with',
]);

// Token characters as in SQLite FTS5's unicode61 tokenizer: letters, numbers, marks, private use.
const TOKEN_CHARACTER = /^[\p{L}\p{N}\p{M}\p{Co}]$/u;
const NON_ASCII = /[^\x00-\x7f]/;
const LATIN_DIACRITICS = /[\u0300-\u036f]/g;
const ASCII_WORD = /^[a-z]+$/;
const STEM_CACHE_LIMIT = 200_000;

function isAsciiTokenCode(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
}

/**
 * Calls `onToken` with each token of `text` in order: NFKC-normalised, lower-cased, split at
 * anything but letters, numbers and marks, Latin diacritics removed (résumé -> resume). The scan
 * runs on character codes, because this is the inner loop of ingestion; only non-ASCII characters
 * are tested against the Unicode classes.
 */
export function forEachToken(text: string, onToken: (token: string) => void): void {
  const nonAscii = NON_ASCII.test(text);
  const lower = (nonAscii ? text.normalize('NFKC') : text).toLowerCase();
  const length = lower.length;
  let start = -1;
  let tokenNonAscii = false;
  for (let index = 0; index <= length; index++) {
    let inToken = false;
    let width = 1;
    if (index < length) {
      const code = lower.charCodeAt(index);
      if (code < 128) inToken = isAsciiTokenCode(code);
      else {
        const point = lower.codePointAt(index)!;
        width = point > 0xffff ? 2 : 1;
        inToken = TOKEN_CHARACTER.test(String.fromCodePoint(point));
        if (inToken) tokenNonAscii = true;
      }
    }
    if (inToken) {
      if (start < 0) start = index;
    } else if (start >= 0) {
      const token = lower.slice(start, index);
      onToken(tokenNonAscii ? token.normalize('NFD').replace(LATIN_DIACRITICS, '').normalize('NFC') : token);
      start = -1;
      tokenNonAscii = false;
    }
    index += width - 1;
  }
}

/** Query text to its distinct tokens, stopwords dropped, at most `limit` of them (the first ones). */
export function queryTokens(text: string, limit: number): string[] {
  const tokens = new Set<string>();
  forEachToken(text, (token) => {
    if (tokens.size < limit && !STOPWORDS.has(token)) tokens.add(token);
  });
  return [...tokens];
}

const stems = new Map<string, string>();

/** Porter stem of an English word; other tokens (digits, other scripts) are kept as they are. */
export function stemOf(token: string): string {
  let stem = stems.get(token);
  if (stem === undefined) {
    stem = token.length > 2 && ASCII_WORD.test(token) ? stemmer(token) : token;
    if (stems.size >= STEM_CACHE_LIMIT) stems.clear();
    stems.set(token, stem);
  }
  return stem;
}

/** Calls `onTerm` with each indexed term of `text`: its tokens without stopwords, stemmed. */
export function forEachTerm(text: string, onTerm: (term: string) => void): void {
  forEachToken(text, (token) => {
    if (!STOPWORDS.has(token)) onTerm(stemOf(token));
  });
}
