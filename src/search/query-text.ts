import { forEachToken } from './engine/analysis.js';
import { ENGLISH, type Language } from './engine/languages.js';

/** A text's words as the index's analyser makes them, in order, the language's stopwords left out (duplicates kept). */
export function queryWords(text: string, language: Language = ENGLISH): string[] {
  const words: string[] = [];
  forEachToken(
    text,
    (token) => {
      if (!language.stopwords.has(token)) words.push(token);
    },
    language,
  );
  return words;
}

/** A query's text as parsed: plain words, words left out, phrases wanted and left out, and prefixes. */
export interface QueryText {
  wanted: string;
  excluded: string;
  phrases: string[];
  excludedPhrases: string[];
  /** Words ending in `*` (`wor*`), without it. */
  prefixes: string[];
}

/**
 * A query's text as a caller types it: the words to find, the words after a minus (`-word`),
 * whose documents are left out, words ending in `*` as prefixes, and phrases in double quotes (`"right to erasure"`, or
 * `-"a phrase"` to leave out). A minus counts only at the start of a word and before a letter,
 * digit or quote: a lone `-`, one inside a word ("well-known") is plain text; so is a quote
 * without its closing one. No text is ever an error, and text without such marks is searched
 * exactly as it is.
 */
export function parseQueryText(text: string): QueryText {
  const phrases: string[] = [];
  const excludedPhrases: string[] = [];
  const prefixes: string[] = [];
  let rest = text;
  if (text.includes('"')) {
    rest = text.replace(PHRASE, (_whole, lead: string, minus: string, phrase: string) => {
      (minus ? excludedPhrases : phrases).push(phrase);
      return `${lead} `;
    });
  }
  if (!rest.includes('-') && !rest.includes('*')) return { wanted: rest, excluded: '', phrases, excludedPhrases, prefixes };
  const wanted: string[] = [];
  const excluded: string[] = [];
  for (const part of rest.split(/(\s+)/)) {
    if (EXCLUSION.test(part)) excluded.push(part.slice(1));
    else if (PREFIX.test(part)) prefixes.push(part.slice(0, -1));
    else wanted.push(part);
  }
  return { wanted: wanted.join(''), excluded: excluded.join(' '), phrases, excludedPhrases, prefixes };
}

/** A prefix as the analyser makes tokens (lower case, diacritics removed): its last token the prefix, any before it plain words. */
export function prefixTokens(prefix: string): { words: string[]; prefix: string | undefined } {
  const tokens: string[] = [];
  forEachToken(prefix, (token) => tokens.push(token));
  return { words: tokens.slice(0, -1), prefix: tokens.at(-1) };
}

/**
 * `prefix: true` (search as you type): the text with its last word made a prefix, when the text
 * ends in a plain word of at least 2 characters (not a phrase's end, an exclusion or a prefix already).
 */
export function withLastWordPrefix(text: string): string {
  const last = text.split(/\s+/).at(-1) ?? '';
  return PREFIX.test(`${last}*`) ? `${text}*` : text;
}

const EXCLUSION = /^-[\p{L}\p{N}]/u;
// A word of at least 2 characters, then `*`: a prefix.
const PREFIX = /^[\p{L}\p{N}][\p{L}\p{N}\p{M}]+\*$/u;
// A quoted phrase at the start of the text or after a space, with its minus if any; the closing
// quote is the next one.
const PHRASE = /(^|\s)(-?)"([^"]*)"/g;
