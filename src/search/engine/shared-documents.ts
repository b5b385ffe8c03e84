import { popcount } from './postings.js';

/**
 * Pairs kept before the counts are dropped and counted anew (about 100 bytes each, so a few MiB
 * at most): far more pairs of dense terms than the searches of a corpus meet in practice.
 */
const MAX_PAIRS = 65_536;

/**
 * How many documents two dense terms share in a field, per pair, for exact totals: a search of two
 * dense terms and rare ones counts |A ∪ B| as |A| + |B| - |A ∩ B|, where a pass over both bitmaps
 * took about a tenth of such a search at a million documents. A pair's count covers the bitmaps'
 * full words, which documents added later (numbered above) never change: it is carried forward
 * over the words filled since, and the last word, partly filled, is counted on every call. Deleted
 * documents keep their bits until the index is rebuilt (a new index, with new counts), so a search
 * with deletions or a filter counts the union itself instead.
 */
export class SharedDocuments {
  private readonly pairs = new Map<string, { count: number; words: number }>();

  /** The documents in both `first` and `second`, bitmaps over `documents` documents, kept under `pair`. */
  count(pair: string, first: Uint32Array, second: Uint32Array, documents: number): number {
    const fullWords = documents >>> 5;
    let counted = this.pairs.get(pair);
    if (counted === undefined) {
      if (this.pairs.size >= MAX_PAIRS) this.pairs.clear();
      counted = { count: 0, words: 0 };
      this.pairs.set(pair, counted);
    }
    if (fullWords > counted.words) {
      let count = counted.count;
      for (let word = counted.words; word < fullWords; word++) count += popcount(first[word] & second[word]);
      counted.count = count;
      counted.words = fullWords;
    }
    return (documents & 31) === 0 ? counted.count : counted.count + popcount(first[fullWords] & second[fullWords]);
  }
}
