import { STOPWORDS, scanTokens, stemOf, tokenText } from './engine/analysis.js';

/**
 * A phrase's words as the index reads them: its tokens in order, null for a stopword,
 * which keeps its place (as in Lucene: "right to erasure" needs a word between "right" and
 * "erasure", any word). Gaps at either end constrain nothing and are dropped. A compound's joined
 * token is left out: its parts carry the positions.
 */
export function phraseWords(text: string): Array<string | null> {
  const words: Array<string | null> = [];
  scanTokens(text, (source, start, end, plain, _hash, joined) => {
    if (joined) return;
    const token = tokenText(source, start, end, plain, false);
    words.push(STOPWORDS.has(token) ? null : token);
  });
  while (words.length > 0 && words[0] === null) words.shift();
  while (words.length > 0 && words[words.length - 1] === null) words.pop();
  return words;
}

/** Whether the text holds the phrase: its words' stems at consecutive positions, stopwords included in the count. */
export function holdsPhrase(text: string, phrase: ReadonlyArray<string | null>): boolean {
  if (phrase.length === 0) return false;
  const words = phrase.map((word) => (word === null ? null : stemOf(word)));
  const stems: string[] = [];
  const first = words[0] as string;
  let found = false;
  scanTokens(text, (source, start, end, plain, _hash, joined) => {
    if (joined || found) return;
    stems.push(stemOf(tokenText(source, start, end, plain, false)));
    const at = stems.length - words.length;
    if (at >= 0 && stems[at] === first) found = words.every((word, offset) => word === null || stems[at + offset] === word);
  });
  return found;
}
