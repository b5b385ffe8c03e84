import { ENGLISH, type Language } from './languages.js';

// Token characters as in SQLite FTS5's unicode61 tokenizer: letters, numbers, marks, private use.
const TOKEN_CHARACTER = /^[\p{L}\p{N}\p{M}\p{Co}]$/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range is all of ASCII, control characters included
const NON_ASCII = /[^\x00-\x7f]/;
// Text of ASCII and the Latin-1 letters (U+00C0-U+00FF) is its own NFKC form, and normalising it
// was a fifth of the analysis of German text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the ranges hold control characters
const NEEDS_NFKC = /[^\x00-\x9f\xc0-\xff]/;
const LATIN_DIACRITICS = /[\u0300-\u036f]/g;

/**
 * Receives one token of a scanned text, at `source.slice(start, end)`; `tokenText` makes it a
 * string. For tokens of characters below U+0100 only (`narrow`; `plain` when all are ASCII
 * letters and digits), `hash` is an FNV-1a hash of their lower-cased characters (separators
 * included), so a caller can look them up without making a string at all. A `joined` token spans
 * the parts of a compound and their joiners ("IL-6": after "il" and "6" comes "il-6", whose text is
 * "il6"); it is narrow only when plain.
 */
export type TokenSink = (source: string, start: number, end: number, plain: boolean, hash: number, joined: boolean, narrow: boolean) => void;

/** Per ASCII code: 0 for a separator, else the lower-case code (letters and digits are tokens). */
const ASCII_TOKEN_CODES = new Uint8Array(128).map((_, code) =>
  (code >= 97 && code <= 122) || (code >= 48 && code <= 57) ? code : code >= 65 && code <= 90 ? code + 32 : 0,
);

/**
 * Hyphens and slashes between two tokens make a compound ("IL-6", "beta-catenin", "HIV/AIDS"),
 * written with and without the joiner in the same texts; a compound is indexed as its parts and
 * as their concatenation, as Lucene's word-delimiter filter does with catenation on.
 */
function isJoiner(code: number): boolean {
  return code === 45 || code === 47 || code === 0x2010 || code === 0x2011;
}

const JOINERS = /[-/\u2010\u2011]/g;

function startsToken(source: string, index: number): boolean {
  const code = source.charCodeAt(index);
  return code < 128 ? ASCII_TOKEN_CODES[code] !== 0 : tokenCharacterWidth(source, index) !== 0;
}

function asciiHash(source: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index++) {
    const code = source.charCodeAt(index);
    hash = Math.imul(hash ^ (code >= 65 && code <= 90 ? code + 32 : code), 0x01000193);
  }
  return hash;
}

/**
 * Per code unit of the Basic Multilingual Plane: 1 for a token character. Testing the Unicode
 * classes per character was most of the analysis of text in languages with accented letters.
 */
const BMP_TOKEN_CHARACTERS = (() => {
  const table = new Uint8Array(0x10000);
  for (let code = 0; code < 0x10000; code++) if ((code < 0xd800 || code > 0xdfff) && TOKEN_CHARACTER.test(String.fromCharCode(code))) table[code] = 1;
  return table;
})();

/** The width in code units of the non-ASCII token character at `index`, or 0 for a separator. */
function tokenCharacterWidth(source: string, index: number): number {
  const code = source.charCodeAt(index);
  if (code < 0xd800 || code > 0xdbff) return BMP_TOKEN_CHARACTERS[code];
  const point = source.codePointAt(index)!;
  return point > 0xffff && TOKEN_CHARACTER.test(String.fromCodePoint(point)) ? 2 : 0;
}

/**
 * Scans `text` for tokens, in order: split at anything but letters, numbers and marks, compared
 * lower-cased, each compound's joined token after its parts; text with non-ASCII characters is
 * NFKC-normalised and lower-cased first. The scan
 * runs on character codes because it is the inner loop of ingestion; only non-ASCII characters
 * are tested against the Unicode classes. With a segmenter (Chinese, Japanese: no spaces between
 * words), only its word-like segments are scanned.
 */
export function scanTokens(text: string, sink: TokenSink, segmenter?: Intl.Segmenter): void {
  const source = NON_ASCII.test(text) ? (NEEDS_NFKC.test(text) ? text.normalize('NFKC') : text).toLowerCase() : text;
  if (segmenter === undefined) scanRange(source, 0, source.length, sink);
  else for (const { segment, index, isWordLike } of segmenter.segment(source)) if (isWordLike) scanRange(source, index, index + segment.length, sink);
}

/** Scans `source.slice(from, to)`, already normalised, for tokens (see scanTokens). */
function scanRange(source: string, from: number, to: number, sink: TokenSink): void {
  let index = from;
  let compoundStart = -1;
  let compoundPlain = true;
  while (index < to) {
    const first = source.charCodeAt(index);
    if (first < 128 ? ASCII_TOKEN_CODES[first] === 0 : tokenCharacterWidth(source, index) === 0) {
      index += first >= 0xd800 && first < 0xdc00 ? 2 : 1;
      continue;
    }
    const start = index;
    let plain = true;
    let narrow = true;
    let hash = 0x811c9dc5;
    while (index < to) {
      const code = source.charCodeAt(index);
      if (code < 128) {
        const lower = ASCII_TOKEN_CODES[code];
        if (lower === 0) break;
        hash = Math.imul(hash ^ lower, 0x01000193);
        index++;
      } else {
        const width = tokenCharacterWidth(source, index);
        if (width === 0) break;
        plain = false;
        // Latin-1 letters (ä, é, ß) are hashed too: the text is lower-cased already.
        if (code < 256) hash = Math.imul(hash ^ code, 0x01000193);
        else narrow = false;
        index += width;
      }
    }
    sink(source, start, index, plain, hash, false, narrow);
    if (index + 1 < to && isJoiner(source.charCodeAt(index)) && startsToken(source, index + 1)) {
      if (compoundStart < 0) {
        compoundStart = start;
        compoundPlain = plain;
      } else compoundPlain &&= plain;
      index++;
    } else if (compoundStart >= 0) {
      compoundPlain &&= plain;
      sink(source, compoundStart, index, compoundPlain, compoundPlain ? asciiHash(source, compoundStart, index) : 0, true, compoundPlain);
      compoundStart = -1;
    }
  }
}

/**
 * A scanned token as a string: lower-cased, Latin diacritics removed (résumé -> resume), a joined
 * token without its joiners.
 */
export function tokenText(source: string, start: number, end: number, plain: boolean, joined: boolean): string {
  let token = source.slice(start, end);
  if (joined) token = token.replace(JOINERS, '');
  return plain ? token.toLowerCase() : token.normalize('NFD').replace(LATIN_DIACRITICS, '').normalize('NFC');
}

/** Calls `onToken` with each token of `text` in the language, in order (see scanTokens and tokenText). */
export function forEachToken(text: string, onToken: (token: string) => void, language: Language = ENGLISH): void {
  scanTokens(text, (source, start, end, plain, _hash, joined) => onToken(tokenText(source, start, end, plain, joined)), language.segmenter);
}

/** Query text to its distinct tokens, the language's stopwords dropped, at most `limit` of them (the first ones). */
export function queryTokens(text: string, limit: number, language: Language = ENGLISH): string[] {
  const tokens = new Set<string>();
  forEachToken(
    text,
    (token) => {
      if (tokens.size < limit && !language.stopwords.has(token)) tokens.add(token);
    },
    language,
  );
  return [...tokens];
}
