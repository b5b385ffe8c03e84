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

/**
 * Receives one token of a scanned text: `source.slice(start, end)`. For tokens of ASCII letters and
 * digits only (`plain`), `hash` is an FNV-1a hash of their characters, so a caller can look them up
 * without making a string; other tokens must be read with `tokenText`.
 */
export type TokenSink = (source: string, start: number, end: number, plain: boolean, hash: number) => void;

/**
 * Scans `text` for tokens, in order: NFKC-normalised, lower-cased, split at anything but letters,
 * numbers and marks. The scan runs on character codes because it is the inner loop of ingestion;
 * only non-ASCII characters are tested against the Unicode classes.
 */
export function scanTokens(text: string, sink: TokenSink): void {
  const lower = (NON_ASCII.test(text) ? text.normalize('NFKC') : text).toLowerCase();
  const length = lower.length;
  let start = -1;
  let plain = true;
  let hash = 0;
  for (let index = 0; index <= length; index++) {
    let inToken = false;
    let width = 1;
    let code = 0;
    if (index < length) {
      code = lower.charCodeAt(index);
      if (code < 128) inToken = (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
      else {
        const point = lower.codePointAt(index)!;
        width = point > 0xffff ? 2 : 1;
        inToken = TOKEN_CHARACTER.test(String.fromCodePoint(point));
      }
    }
    if (inToken) {
      if (start < 0) {
        start = index;
        plain = true;
        hash = 0x811c9dc5;
      }
      if (code >= 128) plain = false;
      else hash = Math.imul(hash ^ code, 0x01000193);
    } else if (start >= 0) {
      sink(lower, start, index, plain, hash);
      start = -1;
    }
    index += width - 1;
  }
}

/** A scanned token as a string, Latin diacritics removed (résumé -> resume). */
export function tokenText(source: string, start: number, end: number, plain: boolean): string {
  const token = source.slice(start, end);
  return plain ? token : token.normalize('NFD').replace(LATIN_DIACRITICS, '').normalize('NFC');
}

/** Calls `onToken` with each token of `text`, in order (see scanTokens and tokenText). */
export function forEachToken(text: string, onToken: (token: string) => void): void {
  scanTokens(text, (source, start, end, plain) => onToken(tokenText(source, start, end, plain)));
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
