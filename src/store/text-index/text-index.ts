import { PostingList, DENSE_FRACTION, DENSE_MINIMUM_DOCUMENTS, frequencyByte, popcount } from './postings.js';
import { forEachStoredTerm } from './term-vector.js';

/**
 * BM25F (Robertson and Zaragoza): each field's term frequency is normalised by that field's own
 * length against its average, the title's counts twice, and the sum is saturated once. k1 and b
 * are the textbook defaults; the title weight says a word in a title tells twice what one in the
 * body does. Measured on SciFact in BENCHMARKS.md.
 */
export const BM25F = { k1: 1.2, b: 0.75, titleWeight: 2 } as const;

export interface IndexedDocument {
  rowid: number;
  titleLength: number;
  textLength: number;
  terms: Uint8Array;
}

export interface WeightedTerm {
  termId: number;
  /** Multiplies the term's score (1 for a query's own terms). */
  weight: number;
  /** Whether a document holding only this term counts as a match (and in `total`). */
  counted: boolean;
}

/** Title and text together, one of them, or the words of metadata field terms (no length normalisation). */
export type SearchField = 'all' | 'title' | 'text' | 'metadata';

export interface IndexQuery {
  terms: WeightedTerm[];
  field: SearchField;
  /** Documents allowed by the filters, one bit each; null when unfiltered. */
  filter: Uint32Array | null;
  topK: number;
}

export interface IndexHit {
  document: number;
  rowid: number;
  score: number;
}

export interface IndexResult {
  total: number;
  /** Best first; documents tied with the last one are all included, so the caller can break ties. */
  hits: IndexHit[];
}

/** Ties at the cut beyond this many are broken by document order rather than handed back. */
const MAX_TIED = 1000;

interface ScoredTerm {
  list: PostingList;
  /** weight x idf x (k1 + 1): what the term adds at most to any document's score. */
  bound: number;
  counted: boolean;
}

/**
 * The full-text index of the corpus, in memory: postings per term id (see postings.ts), document
 * lengths and BM25F normalisations, and deletions as a bitmap (a deleted document's postings stay
 * until the next rebuild, skipped). Documents are numbered in the order they are added, which is
 * the order of their row ids, so row ids map back by binary search.
 *
 * Search is exact top-k with MaxScore pruning: terms are scored whole, best bound first, until
 * the k-th best score so far exceeds what all remaining terms could add together; from then on
 * the remaining (common, low-idf) terms are only looked up for documents that can still reach the
 * top. Totals are exact: the union of the counted terms' documents as a bitmap.
 */
export class TextIndex {
  private documents = 0;
  private capacity = 0;
  private rowids = new Float64Array(0);
  private titleLengths = new Uint32Array(0);
  private textLengths = new Uint32Array(0);
  private titleNorms = new Float64Array(0);
  private textNorms = new Float64Array(0);
  private deleted = new Uint32Array(0);
  private deletedCount = 0;
  private live = 0;
  private titleTotal = 0;
  private textTotal = 0;
  private normTitleAverage = 0;
  private normTextAverage = 0;
  private normsComputed = 0;
  private lists: Array<PostingList | undefined> = [];
  private scores = new Float64Array(0);
  private scratchBits = new Uint32Array(0);
  private exclusion = new Uint32Array(0);

  get liveDocuments(): number {
    return this.live;
  }

  get highestRowid(): number {
    return this.documents === 0 ? 0 : this.rowids[this.documents - 1]!;
  }

  /** Adds documents whose row ids are all above every row id added before. */
  add(batch: IndexedDocument[]): void {
    if (batch.length === 0) return;
    this.ensureCapacity(this.documents + batch.length);
    for (const document of batch) {
      const number = this.documents++;
      this.rowids[number] = document.rowid;
      this.titleLengths[number] = document.titleLength;
      this.textLengths[number] = document.textLength;
      this.titleTotal += document.titleLength;
      this.textTotal += document.textLength;
      this.live++;
      forEachStoredTerm(document.terms, (termId, title, text) => {
        let list = this.lists[termId];
        if (!list) this.lists[termId] = list = new PostingList();
        list.append(number, frequencyByte(title, text));
      });
    }
    if (this.documents >= DENSE_MINIMUM_DOCUMENTS) {
      const threshold = this.documents * DENSE_FRACTION;
      for (const list of this.lists) if (list && !list.dense && list.count >= threshold) list.makeDense(this.capacity);
    }
  }

  /** Marks the document with this row id deleted; `terms` is its stored term vector. */
  remove(rowid: number, terms: Uint8Array): void {
    const number = this.documentOf(rowid);
    if (number < 0 || this.isDeleted(number)) return;
    this.deleted[number >>> 5]! |= 1 << (number & 31);
    this.deletedCount++;
    this.live--;
    this.titleTotal -= this.titleLengths[number]!;
    this.textTotal -= this.textLengths[number]!;
    forEachStoredTerm(terms, (termId) => {
      const list = this.lists[termId];
      if (list) list.liveCount--;
    });
  }

  /** Gives back growth slack after a bulk load. */
  trim(): void {
    for (const list of this.lists) list?.trim();
  }

  documentOf(rowid: number): number {
    let low = 0;
    let high = this.documents - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const value = this.rowids[middle]!;
      if (value === rowid) return middle;
      if (value < rowid) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  /** An empty filter bitmap for the current documents. */
  newFilter(): Uint32Array {
    return new Uint32Array(this.capacity >>> 5);
  }

  /** The documents holding any of the terms, as a filter bitmap. */
  documentsWithAny(termIds: number[]): Uint32Array {
    const bits = this.newFilter();
    for (const termId of termIds) this.lists[termId]?.orInto(bits, bits.length);
    return bits;
  }

  get bytes(): number {
    let bytes = this.capacity * 41;
    for (const list of this.lists) bytes += list?.bytes ?? 0;
    return bytes;
  }

  search(query: IndexQuery): IndexResult {
    if (this.live === 0) return { total: 0, hits: [] };
    this.updateNorms();
    const { k1 } = BM25F;
    const terms: ScoredTerm[] = [];
    for (const { termId, weight, counted } of query.terms) {
      const list = this.lists[termId];
      if (!list || list.liveCount === 0) continue;
      const idf = Math.log(1 + (this.live - list.liveCount + 0.5) / (list.liveCount + 0.5));
      terms.push({ list, bound: weight * idf * (k1 + 1), counted });
    }
    if (!terms.some((term) => term.counted)) return { total: 0, hits: [] };
    const exclusion = this.exclusionFor(query.filter);
    const field = FIELD_CODES[query.field];
    // Counted terms first, best bound first; the others only ever add to documents already matched.
    terms.sort((a, b) => Number(b.counted) - Number(a.counted) || b.bound - a.bound);
    const counted = terms.filter((term) => term.counted).length;
    const remainingBound = new Float64Array(terms.length + 1);
    for (let index = terms.length - 1; index >= 0; index--) remainingBound[index] = remainingBound[index + 1]! + terms[index]!.bound;

    const run: SearchRun = { touched: [], everything: false, candidates: null };
    let threshold = 0;
    let index = 0;
    for (; index < counted; index++) {
      // A one-field search scores every match: its total is counted from the scores.
      if (field === 0 && index > 0 && threshold > remainingBound[index]!) break;
      this.scoreWhole(terms[index]!, field, exclusion, run);
      const scoredBound = remainingBound[0]! - remainingBound[index + 1]!;
      if (field === 0 && index + 1 < counted && scoredBound > remainingBound[index + 1]!) threshold = this.kthScore(run, query.topK);
    }
    if (index < terms.length) {
      if (index === counted) threshold = this.kthScore(run, query.topK);
      const candidates = this.candidatesAbove(run, threshold - remainingBound[index]!);
      const totalOfField = field === 0 ? 0 : this.countScored(run);
      run.candidates = candidates;
      for (; index < terms.length; index++) this.scoreFor(terms[index]!, candidates, field);
      if (field !== 0) {
        const hits = this.best(run, query.topK);
        this.clearScores(run);
        return { total: totalOfField, hits };
      }
    }

    const total = field === 0 ? this.countUnion(terms, exclusion) : this.countScored(run);
    const hits = this.best(run, query.topK);
    this.clearScores(run);
    return { total, hits };
  }

  private scoreWhole(term: ScoredTerm, field: number, exclusion: Uint32Array | null, run: SearchRun): void {
    const list = term.list;
    const { k1, titleWeight } = BM25F;
    const multiplier = term.bound;
    const scores = this.scores;
    const titleNorms = this.titleNorms;
    const textNorms = this.textNorms;
    const frequencies = list.frequencies;
    const touched = run.touched;
    if (list.dense) run.everything = true;
    const everything = run.everything;
    const score = (document: number, frequency: number): void => {
      if (exclusion !== null && (exclusion[document >>> 5]! >>> (document & 31)) & 1) return;
      const pseudo =
        field === 0
          ? titleWeight * (frequency >>> 6) * titleNorms[document]! + (frequency & 63) * textNorms[document]!
          : field === 1
            ? (frequency >>> 6) * titleNorms[document]!
            : field === 2
              ? (frequency & 63) * textNorms[document]!
              : frequency & 63;
      if (pseudo === 0) return;
      if (!everything && scores[document] === 0) touched.push(document);
      scores[document]! += (multiplier * pseudo) / (pseudo + k1);
    };
    if (list.bits) {
      const bits = list.bits;
      const ranks = list.ranks!;
      const words = (list.lastDocument >>> 5) + 1;
      for (let word = 0; word < words; word++) {
        let remaining = bits[word]!;
        if (remaining === 0) continue;
        let position = ranks[word]!;
        const base = word << 5;
        while (remaining !== 0) {
          const lowest = remaining & -remaining;
          score(base + 31 - Math.clz32(lowest), frequencies[position++]!);
          remaining ^= lowest;
        }
      }
      return;
    }
    const gaps = list.gaps!;
    let offset = 0;
    let document = -1;
    for (let position = 0; position < list.count; position++) {
      let byte = gaps[offset++]!;
      let gap = byte & 0x7f;
      let shift = 7;
      while (byte & 0x80) {
        byte = gaps[offset++]!;
        gap |= (byte & 0x7f) << shift;
        shift += 7;
      }
      document += gap;
      score(document, frequencies[position]!);
    }
  }

  /** Adds a term's score to the candidates only (the term can no longer bring in new documents). */
  private scoreFor(term: ScoredTerm, candidates: number[], field: number): void {
    const { k1, titleWeight } = BM25F;
    const scores = this.scores;
    const add = (document: number, frequency: number): void => {
      const pseudo =
        field === 0
          ? titleWeight * (frequency >>> 6) * this.titleNorms[document]! + (frequency & 63) * this.textNorms[document]!
          : field === 1
            ? (frequency >>> 6) * this.titleNorms[document]!
            : field === 2
              ? (frequency & 63) * this.textNorms[document]!
              : frequency & 63;
      if (pseudo > 0) scores[document]! += (term.bound * pseudo) / (pseudo + k1);
    };
    if (term.list.dense) {
      for (const document of candidates) {
        const frequency = term.list.frequencyIn(document);
        if (frequency >= 0) add(document, frequency);
      }
      return;
    }
    term.list.forEach((document, frequency) => {
      if (scores[document]! > 0) add(document, frequency);
    });
  }

  /** The k-th best score so far (0 while fewer than k documents have one). */
  private kthScore(run: SearchRun, k: number): number {
    const best = new Float64Array(k);
    let filled = 0;
    const consider = (score: number): void => {
      if (filled === k && score <= best[k - 1]!) return;
      let position = filled < k ? filled++ : k - 1;
      while (position > 0 && best[position - 1]! < score) {
        best[position] = best[position - 1]!;
        position--;
      }
      best[position] = score;
    };
    this.forEachScored(run, (document) => consider(this.scores[document]!));
    return filled === k ? best[k - 1]! : 0;
  }

  private candidatesAbove(run: SearchRun, minimum: number): number[] {
    const candidates: number[] = [];
    this.forEachScored(run, (document) => {
      if (this.scores[document]! > minimum) candidates.push(document);
    });
    return candidates;
  }

  private forEachScored(run: SearchRun, visit: (document: number) => void): void {
    if (run.candidates) {
      for (const document of run.candidates) visit(document);
    } else if (run.everything) {
      const scores = this.scores;
      for (let document = 0; document < this.documents; document++) if (scores[document]! > 0) visit(document);
    } else {
      for (const document of run.touched) visit(document);
    }
  }

  private best(run: SearchRun, k: number): IndexHit[] {
    const cut = this.kthScore(run, k);
    const hits: IndexHit[] = [];
    this.forEachScored(run, (document) => {
      const score = this.scores[document]!;
      if (score >= cut && hits.length < k + MAX_TIED) hits.push({ document, rowid: this.rowids[document]!, score });
    });
    return hits.sort((a, b) => b.score - a.score || a.document - b.document);
  }

  private countScored(run: SearchRun): number {
    let count = 0;
    this.forEachScored(run, () => count++);
    return count;
  }

  private countUnion(terms: ScoredTerm[], exclusion: Uint32Array | null): number {
    const words = (this.documents + 31) >>> 5;
    const union = this.scratchBits;
    union.fill(0, 0, words);
    for (const term of terms) if (term.counted) term.list.orInto(union, words);
    let count = 0;
    for (let word = 0; word < words; word++) {
      const bits = exclusion === null ? union[word]! : union[word]! & ~exclusion[word]!;
      if (bits !== 0) count += popcount(bits);
    }
    return count;
  }

  private clearScores(run: SearchRun): void {
    if (run.everything) this.scores.fill(0, 0, this.documents);
    else for (const document of run.touched) this.scores[document] = 0;
  }

  /** Deleted documents and those outside the filter, as one bitmap; null when there are none. */
  private exclusionFor(filter: Uint32Array | null): Uint32Array | null {
    if (filter === null && this.deletedCount === 0) return null;
    const words = this.capacity >>> 5;
    const exclusion = this.exclusion;
    for (let word = 0; word < words; word++) {
      exclusion[word] = this.deleted[word]! | (filter === null ? 0 : ~(filter[word] ?? 0));
    }
    return exclusion;
  }

  private isDeleted(number: number): boolean {
    return ((this.deleted[number >>> 5]! >>> (number & 31)) & 1) === 1;
  }

  private ensureCapacity(needed: number): void {
    if (needed <= this.capacity) return;
    const capacity = Math.ceil(Math.max(needed, this.capacity * 1.5, 1024) / 32) * 32;
    this.rowids = grow(this.rowids, capacity);
    this.titleLengths = grow(this.titleLengths, capacity);
    this.textLengths = grow(this.textLengths, capacity);
    this.titleNorms = grow(this.titleNorms, capacity);
    this.textNorms = grow(this.textNorms, capacity);
    this.scores = new Float64Array(capacity);
    this.deleted = grow(this.deleted, capacity >>> 5);
    this.scratchBits = new Uint32Array(capacity >>> 5);
    this.exclusion = new Uint32Array(capacity >>> 5);
    for (const list of this.lists) list?.resizeBitmaps(capacity);
    this.capacity = capacity;
  }

  /**
   * Length normalisations against the current average lengths: for documents added since the last
   * search, or for all of them once the averages moved (a few milliseconds per million documents,
   * at most once per change to the corpus).
   */
  private updateNorms(): void {
    const titleAverage = this.live === 0 ? 0 : this.titleTotal / this.live;
    const textAverage = this.live === 0 ? 0 : this.textTotal / this.live;
    let from = this.normsComputed;
    if (titleAverage !== this.normTitleAverage || textAverage !== this.normTextAverage) {
      from = 0;
      this.normTitleAverage = titleAverage;
      this.normTextAverage = textAverage;
    }
    const { b } = BM25F;
    for (let number = from; number < this.documents; number++) {
      this.titleNorms[number] = norm(this.titleLengths[number]!, titleAverage, b);
      this.textNorms[number] = norm(this.textLengths[number]!, textAverage, b);
    }
    this.normsComputed = this.documents;
  }
}

const FIELD_CODES = { all: 0, title: 1, text: 2, metadata: 3 } as const;

interface SearchRun {
  /** Documents given a score, while no dense list has been scored whole. */
  touched: number[];
  /** A dense list was scored whole: any document may have a score. */
  everything: boolean;
  /** After pruning: the only documents that can still reach the top. */
  candidates: number[] | null;
}

function norm(length: number, average: number, b: number): number {
  return average > 0 ? 1 / (1 - b + (b * length) / average) : 1;
}

function grow<T extends Float64Array | Uint32Array>(array: T, size: number): T {
  const grown = new (array.constructor as new (size: number) => T)(size);
  grown.set(array);
  return grown;
}
