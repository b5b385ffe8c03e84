import { scanTokens } from './engine/analysis.js';
import { ENGLISH, type Language } from './engine/languages.js';

/** How a hit's highlights are made (the body's "highlight"). */
export interface HighlightSettings {
  /** Which fields: title, text or string metadata fields; absent: title and text. */
  fields?: string[];
  preTag: string;
  postTag: string;
  /** About how long the text's snippet is, in characters; cuts fall at word boundaries. */
  snippetChars: number;
  /** HTML-escape the text around the tags (the default), or give it raw. */
  escape: boolean;
}

export const DEFAULT_HIGHLIGHT: Omit<HighlightSettings, 'fields'> = { preTag: '<mark>', postTag: '</mark>', snippetChars: 160, escape: true };

const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range is all of ASCII, control characters included
const ASCII = /^[\x00-\x7f]*$/;
const JOINER = /^[-/\u2010\u2011]$/;
const LATIN_DIACRITICS = /[\u0300-\u036f]/g;
const ELLIPSIS = '…';

interface Word {
  start: number;
  end: number;
  stem: string;
}

/** What highlights mark: words by stem, and phrases (stems in order, null for a stopword's place) as one span each. */
export interface HighlightTerms {
  stems: ReadonlySet<string>;
  phrases: ReadonlyArray<ReadonlyArray<string | null>>;
  /** Words whose stem begins with one of these are marked too. */
  prefixes: readonly string[];
}

/** A span of the text to wrap in tags, with the query word it matched. */
interface Mark {
  start: number;
  end: number;
  stem: string;
}

/** A word as the index analyses it (lower case, NFKC, Latin diacritics removed), stemmed in the language. */
function stemOfWord(word: string, language: Language): string {
  if (ASCII.test(word)) return language.stem(word.toLowerCase());
  return language.stem(word.normalize('NFKC').toLowerCase().normalize('NFD').replace(LATIN_DIACRITICS, '').normalize('NFC'));
}

/**
 * The words of a text with their places in it. ASCII text is scanned as the index scans it; other
 * text word by word, since normalising it first would move the places; Chinese and Japanese text
 * by the language's segmenter, as the index splits it.
 */
function wordsOf(text: string, language: Language): Word[] {
  const { segmenter } = language;
  if (segmenter !== undefined) {
    return Array.from(segmenter.segment(text))
      .filter((segment) => segment.isWordLike)
      .map(({ segment, index }) => ({ start: index, end: index + segment.length, stem: stemOfWord(segment, language) }));
  }
  if (!ASCII.test(text)) {
    return Array.from(text.matchAll(WORD), (match) => ({
      start: match.index,
      end: match.index + match[0].length,
      stem: stemOfWord(match[0], language),
    }));
  }
  const words: Word[] = [];
  scanTokens(text, (source, start, end, _plain, _hash, joined) => {
    if (!joined) words.push({ start, end, stem: language.stem(source.slice(start, end).toLowerCase()) });
  });
  return words;
}

/**
 * The spans of `text` that match a query stem: each word whose stem is one, and each compound
 * ("IL-6") whose joined form is one, as the index also holds compounds joined.
 */
function marksOf(text: string, words: Word[], terms: HighlightTerms, language: Language): Mark[] {
  const { stems, prefixes } = terms;
  const matches = (stem: string) => stems.has(stem) || (prefixes.length > 0 && prefixes.some((prefix) => stem.startsWith(prefix)));
  const marks: Mark[] = [];
  for (let first = 0; first < words.length; ) {
    let last = first;
    while (last + 1 < words.length && words[last + 1].start === words[last].end + 1 && JOINER.test(text[words[last].end])) last++;
    const joined =
      last > first
        ? stemOfWord(
            words
              .slice(first, last + 1)
              .map((word) => text.slice(word.start, word.end))
              .join(''),
            language,
          )
        : undefined;
    if (joined !== undefined && matches(joined)) marks.push({ start: words[first].start, end: words[last].end, stem: joined });
    else for (const word of words.slice(first, last + 1)) if (matches(word.stem)) marks.push(word);
    first = last + 1;
  }
  return terms.phrases.length === 0 ? marks : withPhrases(words, marks, terms.phrases);
}

/** The marks with each occurrence of a phrase made one span, the marks inside it dropped. */
function withPhrases(words: Word[], marks: Mark[], phrases: HighlightTerms['phrases']): Mark[] {
  const spans: Mark[] = [];
  for (const phrase of phrases) {
    if (phrase.length === 0) continue;
    for (let at = 0; at + phrase.length <= words.length; at++) {
      if (phrase.every((stem, offset) => stem === null || words[at + offset].stem === stem))
        spans.push({ start: words[at].start, end: words[at + phrase.length - 1].end, stem: phrase.join(' ') });
    }
  }
  if (spans.length === 0) return marks;
  const outside = marks.filter((mark) => !spans.some((span) => mark.start >= span.start && mark.end <= span.end));
  const merged = [...outside, ...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  // Overlapping phrase occurrences ("a a a" for "a a") become one span.
  const joined: Mark[] = [];
  for (const mark of merged) {
    const previous = joined.at(-1);
    if (previous && mark.start < previous.end) previous.end = Math.max(previous.end, mark.end);
    else joined.push({ ...mark });
  }
  return joined;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => ESCAPES[character] as string);

/** `text.slice(from, to)` with its marks wrapped in the tags, escaped as the settings say. */
function render(text: string, from: number, to: number, marks: Mark[], settings: HighlightSettings): string {
  const plain = settings.escape ? escapeHtml : (part: string) => part;
  let out = '';
  let at = from;
  for (const mark of marks) {
    if (mark.start < from || mark.end > to) continue;
    out += plain(text.slice(at, mark.start)) + settings.preTag + plain(text.slice(mark.start, mark.end)) + settings.postTag;
    at = mark.end;
  }
  return out + plain(text.slice(at, to));
}

/**
 * The window of about `chars` characters, from a word's start to a word's end, holding the most
 * distinct matched words (the earliest such); without any, the beginning of the text.
 */
function bestWindow(text: string, words: Word[], marks: Mark[], chars: number): { from: number; to: number } {
  if (text.length <= chars || words.length === 0) return { from: 0, to: text.length };
  // Marks are in text order: a window from each mark's start, the distinct stems in it counted as
  // it slides (each mark enters and leaves once).
  let best = { from: 0, distinct: 0 };
  const counts = new Map<string, number>();
  let right = 0;
  for (let left = 0; left < marks.length; left++) {
    const start = (marks[left] as Mark).start;
    right = Math.max(right, left);
    while (right < marks.length && (marks[right] as Mark).end <= start + chars) {
      const { stem } = marks[right] as Mark;
      counts.set(stem, (counts.get(stem) ?? 0) + 1);
      right++;
    }
    if (counts.size > best.distinct) best = { from: start, distinct: counts.size };
    if (right > left) {
      const { stem } = marks[left] as Mark;
      const remaining = (counts.get(stem) as number) - 1;
      if (remaining === 0) counts.delete(stem);
      else counts.set(stem, remaining);
    }
  }
  // A window that can reach the text's end starts early enough to be full.
  const last = words[words.length - 1] as Word;
  let from = best.distinct === 0 ? 0 : best.from;
  if (last.end - from < chars) from = words.find((word) => last.end - word.start <= chars)?.start ?? 0;
  const inside = words.filter((word) => word.start >= from && word.end <= from + chars);
  return { from, to: inside.at(-1)?.end ?? Math.min(text.length, from + chars) };
}

/** The text's best snippet, marked, with `…` where it was cut. */
function snippet(text: string, terms: HighlightTerms, settings: HighlightSettings, language: Language): string {
  const words = wordsOf(text, language);
  const marks = marksOf(text, words, terms, language);
  const { from, to } = bestWindow(text, words, marks, settings.snippetChars);
  const before = from > 0 && text.slice(0, from).trim() !== '' ? ELLIPSIS : '';
  const after = to < text.length && text.slice(to).trim() !== '' ? ELLIPSIS : '';
  return before + render(text, from, to, marks, settings) + after;
}

function whole(text: string, terms: HighlightTerms, settings: HighlightSettings, language: Language): string {
  return render(text, 0, text.length, marksOf(text, wordsOf(text, language), terms, language), settings);
}

/**
 * What a query's words and phrases (tokens, null for a stopword) mark in a document, stemmed in
 * the query's language. Stopwords alone match nothing.
 */
export function highlightTerms(
  words: string[],
  phrases: ReadonlyArray<ReadonlyArray<string | null>> = [],
  matched: { prefixes?: readonly string[]; stems?: readonly string[] } = {},
  language: Language = ENGLISH,
): HighlightTerms {
  const stemOf = (word: string) => stemOfWord(word, language);
  return {
    stems: new Set([...words.filter((word) => !language.stopwords.has(word)).map(stemOf), ...(matched.stems ?? [])]),
    phrases: phrases.map((phrase) => phrase.map((word) => (word === null ? null : stemOf(word)))),
    prefixes: matched.prefixes ?? [],
  };
}

/**
 * A hit's highlights: the title whole, the text as its best snippet, and named string metadata
 * fields whole, each with the words and phrases of `terms` wrapped in the tags. Fields the document lacks
 * (or whose value is not a string) are left out. The document's words are read in its language.
 */
export function highlightsOf(
  document: { title: string; text: string; metadata: Record<string, unknown> },
  terms: HighlightTerms,
  settings: HighlightSettings,
  language: Language = ENGLISH,
): Record<string, string> {
  const highlights: Record<string, string> = {};
  for (const field of settings.fields ?? ['title', 'text']) {
    if (field === 'text') highlights.text = snippet(document.text, terms, settings, language);
    else if (field === 'title') highlights.title = whole(document.title, terms, settings, language);
    else {
      const value = document.metadata[field];
      if (typeof value === 'string') highlights[field] = whole(value, terms, settings, language);
    }
  }
  return highlights;
}
