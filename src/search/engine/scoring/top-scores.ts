/** kthHighest's heap, kept from call to call: each thread has its own, and a call ends before the next begins. */
let kthHeap = new Float64Array(100);

/** Ties at the cut beyond this many are broken by document order rather than handed back. */
const MAX_TIED = 1000;

/** The k-th highest of the first `length` scores (k <= length), with a heap of k. */
export function kthHighest(scores: Float64Array, length: number, k: number): number {
  if (kthHeap.length < k) kthHeap = new Float64Array(k);
  const heap = kthHeap;
  for (let index = 0; index < k; index++) {
    const score = scores[index];
    let position = index;
    for (; position > 0 && heap[position - 1] > score; position--) heap[position] = heap[position - 1];
    heap[position] = score;
  }
  for (let index = k; index < length; index++) {
    const score = scores[index];
    if (score <= heap[0]) continue;
    let position = 0;
    for (;;) {
      const left = 2 * position + 1;
      if (left >= k) break;
      const right = left + 1;
      const child = right < k && heap[right] < heap[left] ? right : left;
      if (heap[child] >= score) break;
      heap[position] = heap[child];
      position = child;
    }
    heap[position] = score;
  }
  return heap[0];
}

export const noneBest = (): readonly number[] => [];

/** The document of another share's score (see IndexQuery.othersBest): it counts for the bar, and is no hit. */
const ANOTHER_SHARE = -1;

/**
 * The k best (document, score) pairs offered, and every document tied with the k-th, so that
 * the caller can order ties its own way. `threshold` is the k-th best score once k were offered,
 * another share's best scores (IndexQuery.othersBest) among them once known.
 */
export class TopScores {
  private readonly heapScores: Float64Array;
  private readonly heapDocuments: Int32Array;
  private size = 0;
  private tied: Array<{ document: number; score: number }> = [];

  private othersTaken = false;

  constructor(
    private readonly k: number,
    private readonly othersBest: () => readonly number[] = noneBest,
  ) {
    this.heapScores = new Float64Array(k);
    this.heapDocuments = new Int32Array(k);
    this.takeOthersBest();
  }

  get threshold(): number {
    return this.size < this.k ? 0 : this.heapScores[0];
  }

  /** Offers another share's best scores, once, as soon as they are known. */
  takeOthersBest(): void {
    if (this.othersTaken) return;
    const scores = this.othersBest();
    if (scores.length === 0) return;
    this.othersTaken = true;
    for (const score of scores) this.offer(ANOTHER_SHARE, score);
  }

  offer(document: number, score: number): void {
    if (this.size < this.k) {
      this.push(document, score);
      return;
    }
    const minimum = this.heapScores[0];
    if (score < minimum) return;
    if (score === minimum) {
      if (this.tied.length < MAX_TIED) this.tied.push({ document, score });
      return;
    }
    const displaced = this.heapDocuments[0];
    this.replaceMinimum(document, score);
    if (this.heapScores[0] === minimum) {
      if (this.tied.length < MAX_TIED) this.tied.push({ document: displaced, score: minimum });
    } else if (this.tied.length > 0) this.tied = [];
  }

  hits(): Array<{ document: number; score: number }> {
    const hits = Array.from({ length: this.size }, (_, index) => ({ document: this.heapDocuments[index], score: this.heapScores[index] }));
    const cut = this.threshold;
    for (const tie of this.tied) if (tie.score === cut) hits.push(tie);
    return hits.filter((hit) => hit.document !== ANOTHER_SHARE).sort((a, b) => b.score - a.score || a.document - b.document);
  }

  private push(document: number, score: number): void {
    let index = this.size++;
    while (index > 0) {
      const parent = (index - 1) >>> 1;
      if (this.heapScores[parent] <= score) break;
      this.heapScores[index] = this.heapScores[parent];
      this.heapDocuments[index] = this.heapDocuments[parent];
      index = parent;
    }
    this.heapScores[index] = score;
    this.heapDocuments[index] = document;
  }

  private replaceMinimum(document: number, score: number): void {
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && this.heapScores[right] < this.heapScores[left] ? right : left;
      if (this.heapScores[child] >= score) break;
      this.heapScores[index] = this.heapScores[child];
      this.heapDocuments[index] = this.heapDocuments[child];
      index = child;
    }
    this.heapScores[index] = score;
    this.heapDocuments[index] = document;
  }
}

/** The `count` blocks with the largest positive bounds offered, largest first. */
export class BestBlocks {
  readonly chosen: number[] = [];
  private readonly bounds: number[] = [];
  /** The smallest bound chosen once `count` are, else 0: a block must beat it to be chosen. */
  floor = 0;

  constructor(private readonly count: number) {}

  offer(block: number, bound: number): void {
    if (bound <= this.floor) return;
    const { chosen, bounds, count } = this;
    let position = chosen.length < count ? chosen.length : count - 1;
    while (position > 0 && bounds[position - 1] < bound) {
      chosen[position] = chosen[position - 1];
      bounds[position] = bounds[position - 1];
      position--;
    }
    chosen[position] = block;
    bounds[position] = bound;
    if (chosen.length === count) this.floor = bounds[count - 1];
  }
}

/**
 * The documents the terms scored so far give a score, in document order, with their scores; kept
 * from search to search. Adding a term's postings merges two sorted lists into a second pair of
 * arrays, which then swap.
 */
export class SparseScores {
  documents = new Int32Array(1024);
  scores = new Float64Array(1024);
  length = 0;
  private mergedDocuments = new Int32Array(1024);
  private mergedScores = new Float64Array(1024);

  /**
   * Adds `added[i]` to the score of `documents[i]`, for the first `count`; zeros add no document.
   * `documentCount`: the index's, which no union of documents can exceed.
   */
  add(documents: Int32Array, added: Float64Array, count: number, documentCount: number): void {
    const needed = Math.min(this.length + count, documentCount);
    if (this.mergedDocuments.length < needed) {
      this.mergedDocuments = new Int32Array(Math.min(needed * 2, documentCount));
      this.mergedScores = new Float64Array(Math.min(needed * 2, documentCount));
    }
    const { documents: ownDocuments, scores: ownScores, length, mergedDocuments, mergedScores } = this;
    let own = 0;
    let other = 0;
    let merged = 0;
    while (own < length && other < count) {
      const ownDocument = ownDocuments[own];
      const otherDocument = documents[other];
      if (ownDocument < otherDocument) {
        mergedDocuments[merged] = ownDocument;
        mergedScores[merged++] = ownScores[own++];
      } else if (ownDocument === otherDocument) {
        mergedDocuments[merged] = ownDocument;
        mergedScores[merged++] = ownScores[own++] + added[other++];
      } else {
        if (added[other] !== 0) {
          mergedDocuments[merged] = otherDocument;
          mergedScores[merged++] = added[other];
        }
        other++;
      }
    }
    for (; own < length; own++) {
      mergedDocuments[merged] = ownDocuments[own];
      mergedScores[merged++] = ownScores[own];
    }
    for (; other < count; other++) {
      if (added[other] === 0) continue;
      mergedDocuments[merged] = documents[other];
      mergedScores[merged++] = added[other];
    }
    this.documents = mergedDocuments;
    this.scores = mergedScores;
    this.mergedDocuments = ownDocuments;
    this.mergedScores = ownScores;
    this.length = merged;
  }
}
