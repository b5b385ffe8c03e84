import type { FilterRange, QueryField } from '../search/document-index.js';
import { stemOf } from '../search/engine/analysis.js';
import type { FilterScalar } from '../search/engine/search-index.js';
import { filterTerm, metadataWordTerm, type TermDictionary } from '../search/engine/term-vector.js';

/** A query's words and values as the dictionary's term ids. */
export class TermIds {
  constructor(private readonly dictionary: () => TermDictionary) {}

  /** Analysed words as term ids in the field (undefined: no document holds it). */
  words(field: QueryField, words: readonly string[]): Array<number | undefined> {
    const dictionary = this.dictionary();
    return words.map((word) => {
      const stem = stemOf(word);
      return dictionary.idOf(field.kind === 'metadata' ? metadataWordTerm(field.name, stem) : stem);
    });
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
