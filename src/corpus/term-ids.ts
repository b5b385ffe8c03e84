import type { Corrections, FilterRange, QueryField, Typos } from '../search/document-index.js';
import type { Language } from '../search/engine/languages.js';
import type { FilterScalar } from '../search/engine/search-index.js';
import { filterTerm, metadataWordTerm, type TermDictionary } from '../search/engine/term-vector.js';

/** A query's words (stemmed in its language) and values as the dictionary's term ids. */
export class TermIds {
  constructor(
    private readonly dictionary: () => TermDictionary,
    readonly language: Language,
  ) {}

  /** The same dictionary, words stemmed in `language`. */
  in(language: Language): TermIds {
    return language === this.language ? this : new TermIds(this.dictionary, language);
  }

  /** Analysed words as term ids in the field (undefined: no document holds it). */
  words(field: QueryField, words: readonly string[]): Array<number | undefined> {
    const dictionary = this.dictionary();
    return words.map((word) => {
      const stem = this.language.stem(word);
      return dictionary.idOf(field.kind === 'metadata' ? metadataWordTerm(field.name, stem) : stem);
    });
  }

  /**
   * The word terms of the field that begin with `prefix`, a token as the analyser makes them; and,
   * when stemming changes it, those that begin with its stem, so that a word typed whole
   * ("privacy", stemmed "privaci") or into its stemmed ending ("studie") still finds itself.
   */
  prefixed(field: QueryField, prefix: string): number[] {
    const marker = field.kind === 'metadata' ? metadataWordTerm(field.name, '') : '';
    const spelling = this.dictionary().spelling();
    const stem = this.language.stem(prefix);
    const found = spelling.withPrefix(marker + prefix, Number.POSITIVE_INFINITY).map((entry) => entry.id);
    if (stem === prefix) return found;
    return [...new Set([...found, ...spelling.withPrefix(marker + stem, Number.POSITIVE_INFINITY).map((entry) => entry.id)])];
  }

  /**
   * The terms of the field within `edits` of the word's stem, the word's own left out: those
   * of the fewest edits found, at most MAX_CORRECTIONS of them; each with its term (unmarked).
   */
  corrections(field: QueryField, word: string, edits: number): Array<{ id: number; term: string }> {
    if (edits === 0) return [];
    const marker = field.kind === 'metadata' ? metadataWordTerm(field.name, '') : '';
    const spelling = this.dictionary().spelling();
    // One edit first: its spellings are looked up by name, and when any is found, words two
    // edits away would be dropped anyway (only the fewest edits are kept).
    const stem = this.language.stem(word);
    let found = spelling.within(stem, 1, marker);
    if (found.length === 0 && edits > 1) found = spelling.within(stem, edits, marker);
    const fewest = found.filter((entry) => entry.edits === found[0].edits).slice(0, MAX_CORRECTIONS);
    return fewest.map((entry) => ({ id: entry.id, term: entry.term.slice(marker.length) }));
  }

  /** The filter terms of a field's values that some document holds. */
  values(field: string, values: readonly FilterScalar[]): number[] {
    const dictionary = this.dictionary();
    return values.flatMap((value) => dictionary.idOf(filterTerm(field, value)) ?? []);
  }

  /** The filter terms of a field's values within the range. */
  inRange(field: string, range: FilterRange): number[] {
    return this.dictionary()
      .valuesOf(field)
      .flatMap((entry) => (withinRange(entry.value, range) ? [entry.id] : []));
  }

  /** The filter terms of every value of the field. */
  anyValue(field: string): number[] {
    return this.dictionary()
      .valuesOf(field)
      .map((entry) => entry.id);
  }
}

/** A query's typos (see Typos), and the corrections its words were matched through. */
export class Spelling {
  private readonly corrected = new Map<string, Set<string>>();

  constructor(readonly typos: Typos = 'auto') {}

  noteCorrections(word: string, terms: string[]): void {
    const noted = this.corrected.get(word) ?? new Set<string>();
    for (const term of terms) noted.add(term);
    this.corrected.set(word, noted);
  }

  /** What was corrected, or undefined when nothing was. */
  corrections(): Corrections | undefined {
    if (this.corrected.size === 0) return undefined;
    return Object.fromEntries(Array.from(this.corrected, ([word, terms]) => [word, [...terms]]));
  }
}

/** Longer words are matched exactly: no word is that long, and one edit's spellings grow with the length. */
const MAX_TYPO_WORD_LENGTH = 40;

/** A misspelt word matches at most this many words: the ones of the fewest edits. */
const MAX_CORRECTIONS = 8;

/**
 * The edits a word may be away from the words it matches through a typo: with `auto`, 1 from 5
 * characters, 2 from 9 (applied only to a word no document holds); with 1 or 2, that many from 4
 * characters. Words with digits are matched exactly.
 */
export function editsFor(word: string, typos: Typos): number {
  if (typos === 0 || word.length > MAX_TYPO_WORD_LENGTH || /\p{N}/u.test(word)) return 0;
  const length = [...word].length;
  if (typos === 'auto') return length >= 9 ? 2 : length >= 5 ? 1 : 0;
  return length >= 4 ? typos : 0;
}

/** Whether a value lies within every bound of the range: of the bound's type, numbers by value, strings by code point. */
export function withinRange(value: FilterScalar, range: FilterRange): boolean {
  const bounds: Array<[number | string | undefined, (order: number) => boolean]> = [
    [range.gt, (order) => order > 0],
    [range.gte, (order) => order >= 0],
    [range.lt, (order) => order < 0],
    [range.lte, (order) => order <= 0],
  ];
  for (const [bound, holds] of bounds) {
    if (bound === undefined) continue;
    if (typeof value !== typeof bound) return false;
    const order = typeof value === 'number' ? value - (bound as number) : compareCodePoints(value as string, bound as string);
    if (!holds(order)) return false;
  }
  return true;
}

/** Strings in code point order (JavaScript's < orders UTF-16 code units, which differs past U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const difference = (x.value.codePointAt(0) as number) - (y.value.codePointAt(0) as number);
    if (difference !== 0) return difference;
  }
}
