import type { SortKey } from '../search/document-index.js';
import type { CorpusFile } from './corpus-file.js';
import type { ScoredRows } from './scored-rows.js';
import { compareCodePoints } from './term-ids.js';

type SortValue = number | string;

/** SQLite's JSON types whose values sort: numbers and strings (true, false, null and objects do not). */
const SCALAR_TYPES = new Set(['integer', 'real', 'text']);

/** A field's sortable values by row, read from the stored metadata: an array's smallest and largest element. */
interface FieldValues {
  upTo: number;
  rowids: number[];
  low: SortValue[];
  high: SortValue[];
}

export interface Label {
  docId: string;
  title: string;
}

/**
 * Orders every match of a query by up to three keys, as Elasticsearch does: numbers before
 * strings (by code point), documents lacking the field last in either direction, an array by its
 * smallest element ascending and its largest descending; ties go to the next key, then to the
 * score, then to doc_id. A field's values are read from the stored documents once and kept,
 * reading only rows added since at the next sort (row ids only grow; a changed document is a new row).
 */
export class SortOrder {
  private readonly fields = new Map<string, FieldValues>();

  constructor(private readonly file: CorpusFile) {}

  /** The first `depth` matches in the order of `keys`, with their labels (rows without one are dropped). */
  order(matches: ScoredRows, keys: SortKey[], depth: number, labelOf: (rowid: number) => Label | undefined): Array<Label & { score: number }> {
    const count = matches.rowids.length;
    const labels = new Array<Label | undefined>(count);
    const label = (index: number) => {
      labels[index] ??= labelOf(matches.rowids[index]);
      return labels[index];
    };
    const columns = keys.map((key) => this.column(key, matches, label));
    const order = Array.from({ length: count }, (_, index) => index);
    order.sort((a, b) => {
      for (let position = 0; position < keys.length; position++) {
        const difference = compareSortValues(columns[position][a], columns[position][b], keys[position].descending);
        if (difference !== 0) return difference;
      }
      return matches.scores[b] - matches.scores[a] || compareCodePoints(label(a)?.docId ?? '', label(b)?.docId ?? '');
    });
    const ordered: Array<Label & { score: number }> = [];
    for (const index of order) {
      if (ordered.length >= depth) break;
      const found = label(index);
      if (found) ordered.push({ ...found, score: matches.scores[index] });
    }
    return ordered;
  }

  private column(key: SortKey, matches: ScoredRows, label: (index: number) => Label | undefined): Array<SortValue | undefined> {
    const count = matches.rowids.length;
    switch (key.by.kind) {
      case 'score':
        return Array.from(matches.scores);
      case 'doc_id':
        return Array.from({ length: count }, (_, index) => label(index)?.docId);
      case 'title':
        return Array.from({ length: count }, (_, index) => label(index)?.title);
      case 'field': {
        const values = this.valuesOf(key.by.name);
        const side = key.descending ? values.high : values.low;
        let at = 0;
        // Both in row id order: one walk.
        return Array.from(matches.rowids, (rowid) => {
          while (at < values.rowids.length && values.rowids[at] < rowid) at++;
          return values.rowids[at] === rowid ? side[at] : undefined;
        });
      }
    }
  }

  private valuesOf(field: string): FieldValues {
    let values = this.fields.get(field);
    if (!values) {
      values = { upTo: 0, rowids: [], low: [], high: [] };
      this.fields.set(field, values);
    }
    const rows = this.file.sql.sortValuesAfter.all({ field, after: values.upTo }) as Array<{
      id: number;
      type: string;
      value: unknown;
    }>;
    for (const row of rows) {
      values.upTo = row.id;
      const scalars = row.type === 'array' ? (JSON.parse(row.value as string) as unknown[]) : SCALAR_TYPES.has(row.type) ? [row.value] : [];
      const sortable = scalars.filter((item): item is SortValue => typeof item === 'number' || typeof item === 'string');
      if (sortable.length === 0) continue;
      let low = sortable[0];
      let high = sortable[0];
      for (const item of sortable) {
        if (compareSortValues(item, low, false) < 0) low = item;
        if (compareSortValues(item, high, false) > 0) high = item;
      }
      values.rowids.push(row.id);
      values.low.push(low);
      values.high.push(high);
    }
    return values;
  }
}

/** Numbers before strings, numbers by value and strings by code point; a missing value last in either direction. */
export function compareSortValues(a: SortValue | undefined, b: SortValue | undefined, descending: boolean): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  let order: number;
  if (typeof a === 'number' && typeof b === 'number') order = a - b;
  else if (typeof a === 'string' && typeof b === 'string') order = compareCodePoints(a, b);
  else order = typeof a === 'number' ? -1 : 1;
  return descending ? -order : order;
}
