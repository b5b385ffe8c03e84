import { scanTokens, tokenText } from './engine/analysis.js';
import { ENGLISH, type Language } from './engine/languages.js';

/**
 * A phrase's words as the index reads them: its tokens in order, null for a stopword,
 * which keeps its place (as in Lucene: "right to erasure" needs a word between "right" and
 * "erasure", any word). Gaps at either end constrain nothing and are dropped. A compound's joined
 * token is left out: its parts carry the positions.
 */
export function phraseWords(text: string, language: Language = ENGLISH): Array<string | null> {
  const words: Array<string | null> = [];
  scanTokens(
    text,
    (source, start, end, plain, _hash, joined) => {
      if (joined) return;
      const token = tokenText(source, start, end, plain, false);
      words.push(language.stopwords.has(token) ? null : token);
    },
    language.segmenter,
  );
  while (words.length > 0 && words[0] === null) words.shift();
  while (words.length > 0 && words[words.length - 1] === null) words.pop();
  return words;
}

/**
 * Whether a text holds the phrase: its words' stems at consecutive positions, stopwords included
 * in the count. Made once per query and used on every candidate: a token of ASCII letters and
 * digits is looked up by the hash the scan computes, its characters compared with the token
 * remembered under it, so most tokens cost no string and no stemming. The text is read in the
 * phrase's language.
 */
export function phraseMatcher(phrase: ReadonlyArray<string | null>, language: Language = ENGLISH): (text: string) => boolean {
  const stemOf = (token: string) => language.stem(token);
  const stems = [...new Set(phrase.filter((word): word is string => word !== null).map(stemOf))];
  // Per position of the phrase, the index of its stem (-1: any word, a stopword's place).
  const wanted = Int32Array.from(phrase, (word) => (word === null ? -1 : stems.indexOf(stemOf(word))));
  const codeOfStem = (stem: string) => stems.indexOf(stem);
  const seen = new Map<number, Array<{ token: string; code: number }>>();
  const codeOfPlain = (source: string, start: number, end: number, hash: number): number => {
    const bucket = seen.get(hash);
    if (bucket) for (const entry of bucket) if (sameLowerCase(entry.token, source, start, end)) return entry.code;
    const token = source.slice(start, end).toLowerCase();
    const code = codeOfStem(stemOf(token));
    if (bucket) bucket.push({ token, code });
    else seen.set(hash, [{ token, code }]);
    return code;
  };
  const length = wanted.length;
  const recent = new Int32Array(length);
  return (text) => {
    if (length === 0) return false;
    let count = 0;
    let found = false;
    const segmenter = language.segmenter;
    scanTokens(
      text,
      (source, start, end, plain, hash, joined) => {
        if (joined || found) return;
        const code = plain ? codeOfPlain(source, start, end, hash) : codeOfStem(stemOf(tokenText(source, start, end, plain, false)));
        recent[count % length] = code;
        count++;
        if (count < length || code !== wanted[length - 1]) return;
        found = true;
        for (let offset = 0; offset < length && found; offset++) {
          const need = wanted[offset];
          if (need !== -1 && recent[(count - length + offset) % length] !== need) found = false;
        }
      },
      segmenter,
    );
    return found;
  };
}

/** Whether `source.slice(start, end)`, ASCII lower-cased, is `token`. */
function sameLowerCase(token: string, source: string, start: number, end: number): boolean {
  if (token.length !== end - start) return false;
  for (let index = 0; index < token.length; index++) {
    const code = source.charCodeAt(start + index);
    if ((code >= 65 && code <= 90 ? code + 32 : code) !== token.charCodeAt(index)) return false;
  }
  return true;
}
