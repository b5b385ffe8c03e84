import type { TermSearch } from './search-index.js';
import type { TextIndex } from './text-index.js';

/**
 * Filter bitmaps of one index, kept for reuse until it changes: the documents every group of
 * term ids allows (a document is allowed by a group when it holds any of its terms) and that hold
 * none of the excluded term ids, as a bitmap over the index's document numbers. Oldest out past
 * `limit`.
 */
export class FilterBitmaps {
  private readonly cache = new Map<string, Uint32Array>();

  constructor(private readonly limit: number) {}

  /** Null for no groups and no exclusions: nothing is filtered out. */
  private of(index: TextIndex, groups: number[][], excluded: number[] = []): Uint32Array | null {
    if (groups.length === 0 && excluded.length === 0) return null;
    const key = JSON.stringify([groups, excluded]);
    const cached = this.cache.get(key);
    if (cached) return cached;
    let allowed: Uint32Array | null = null;
    for (const termIds of groups) {
      const bits = index.documentsWithAny(termIds);
      if (allowed) for (let word = 0; word < allowed.length; word++) allowed[word] &= bits[word];
      else allowed = bits;
    }
    if (excluded.length > 0) {
      // Bits past the last document number stand for no document: none is found through them.
      const left = index.documentsWithAny(excluded);
      if (!allowed) allowed = left.map((word) => ~word);
      else for (let word = 0; word < allowed.length; word++) allowed[word] &= ~left[word];
    }
    if (this.cache.size >= this.limit) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, allowed!);
    return allowed;
  }

  /** The search's filter bitmap: its groups and exclusions (cached), then its allowed rows (never cached). */
  forSearch(index: TextIndex, query: TermSearch): Uint32Array | null {
    const cached = this.of(index, query.filters, query.excluded);
    return query.allowedRows ? onlyRows(index, cached, query.allowedRows) : cached;
  }

  clear(): void {
    this.cache.clear();
  }
}

/** The documents of `rows` that `filter` (null: every document) allows, as a new bitmap. */
function onlyRows(index: TextIndex, filter: Uint32Array | null, rows: Float64Array): Uint32Array {
  const bits = index.newFilter();
  for (const rowid of rows) {
    const document = index.documentOf(rowid);
    if (document >= 0) bits[document >>> 5] |= 1 << (document & 31);
  }
  if (filter) for (let word = 0; word < bits.length; word++) bits[word] &= filter[word];
  return bits;
}
