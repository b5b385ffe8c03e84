/** A query's text as parsed: plain words, words left out, and phrases wanted and left out. */
export interface QueryText {
  wanted: string;
  excluded: string;
  phrases: string[];
  excludedPhrases: string[];
}

/**
 * A query's text as a caller types it: the words to find, the words after a minus (`-word`),
 * whose documents are left out, and phrases in double quotes (`"right to erasure"`, or
 * `-"a phrase"` to leave out). A minus counts only at the start of a word and before a letter,
 * digit or quote: a lone `-`, one inside a word ("well-known") is plain text; so is a quote
 * without its closing one. No text is ever an error, and text without such marks is searched
 * exactly as it is.
 */
export function parseQueryText(text: string): QueryText {
  const phrases: string[] = [];
  const excludedPhrases: string[] = [];
  let rest = text;
  if (text.includes('"')) {
    rest = text.replace(PHRASE, (_whole, lead: string, minus: string, phrase: string) => {
      (minus ? excludedPhrases : phrases).push(phrase);
      return `${lead} `;
    });
  }
  if (!rest.includes('-')) return { wanted: rest, excluded: '', phrases, excludedPhrases };
  const wanted: string[] = [];
  const excluded: string[] = [];
  for (const part of rest.split(/(\s+)/)) {
    if (EXCLUSION.test(part)) excluded.push(part.slice(1));
    else wanted.push(part);
  }
  return { wanted: wanted.join(''), excluded: excluded.join(' '), phrases, excludedPhrases };
}

const EXCLUSION = /^-[\p{L}\p{N}]/u;
// A quoted phrase at the start of the text or after a space, with its minus if any; the closing
// quote is the next one.
const PHRASE = /(^|\s)(-?)"([^"]*)"/g;
