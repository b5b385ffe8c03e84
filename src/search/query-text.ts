/**
 * A query's text as a caller types it: the words to find, and the words after a minus (`-word`),
 * whose documents are left out. A minus counts only at the start of a word and before a letter or
 * digit: a lone `-`, one inside a word ("well-known") or before a quote is plain text, so no text is
 * ever an error, and text without such a word is searched exactly as it is.
 */
export function parseQueryText(text: string): { wanted: string; excluded: string } {
  if (!text.includes('-')) return { wanted: text, excluded: '' };
  const wanted: string[] = [];
  const excluded: string[] = [];
  for (const part of text.split(/(\s+)/)) {
    if (EXCLUSION.test(part)) excluded.push(part.slice(1));
    else wanted.push(part);
  }
  return { wanted: wanted.join(''), excluded: excluded.join(' ') };
}

const EXCLUSION = /^-[\p{L}\p{N}]/u;
