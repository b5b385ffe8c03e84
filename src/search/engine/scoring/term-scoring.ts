import { BLOCK_SHIFT, type IndexedDocuments } from '../indexed-documents.js';
import { type PostingList, popcount, RANK_GROUP_SHIFT, SATURATION_STEPS } from '../postings.js';
import { postingsBefore } from './bitmap-counts.js';
import { BM25F, normOf, pseudoFrequency, TEXT_BITS, TEXT_MASK, textLengthAt, titleLengthAt, WIDE } from './bm25f.js';
import { BestBlocks, SparseScores, type TopScores } from './top-scores.js';

/** Postings whose documents' lengths are read ahead of scoring them (see gatherLengths). */
const LENGTHS_CHUNK = 2048;

/** Dense terms summed per pass over the blocks (see sumBlocks). */
const TERMS_PER_PASS = 3;

/** Blocks scored first, best bounds first, to raise the bar before the pass over all blocks. */
const FIRST_BLOCKS = 32;

export interface ScoredTerm {
  termId: number;
  list: PostingList;
  /** idf x (k1 + 1): the term's score is this times its saturated frequency, which is below 1. */
  multiplier: number;
}

/**
 * How a TextIndex scores terms over its indexed documents: rare ones whole into an accumulator
 * (scoreWhole), common ones block by block against the k-th best score so far (scoreBlocks), with
 * the per-search working memory kept across searches. It reads the documents' arrays through
 * `index` at each call, since the index replaces them as it grows.
 */
export class TermScorer {
  constructor(private readonly index: IndexedDocuments) {}

  /**
   * Per-search working memory, kept across searches: at a million documents, allocating it anew
   * (hundreds of kilobytes a search) made the garbage collector pause requests for 20 ms.
   * `touchedBits`: the documents in `sparse`, as bits; all zero between searches.
   */
  touchedBits = new Uint32Array(0);
  /** Per block, the highest score sparse terms gave a document in it; all zero between searches. */
  sparseBounds = new Float64Array(0);
  /** Per block holding documents in `sparse`, the position of its first one there. */
  sparseStarts = new Int32Array(0);
  exclusion = new Uint32Array(0);
  blockBounds = new Float64Array(0);
  /** Per block, the union of the documents of the terms summed so far (scoreBlocks, past three dense terms). */
  blockUnions = new Uint32Array(0);
  /** The list being scored whole: its postings' documents, frequency bytes, and what each adds to the score. */
  postingDocuments = new Int32Array(0);
  postingScores = new Float64Array(0);
  postingFrequencies = new Uint8Array(0);
  readonly chunkLengths = new Uint32Array(2 * LENGTHS_CHUNK);
  readonly sparse = new SparseScores();

  /** Deleted documents and those outside the filter, as one bitmap; null when there are none. */
  exclusionFor(filter: Uint32Array | null): Uint32Array | null {
    if (filter === null && this.index.deletedCount === 0) return null;
    const words = this.index.capacity >>> 5;
    const exclusion = this.exclusion;
    for (let word = 0; word < words; word++) {
      exclusion[word] = this.index.deleted[word] | (filter === null ? 0 : ~(filter[word] ?? 0));
    }
    return exclusion;
  }

  /**
   * Adds a term's score to every document holding it (in the field). What each posting adds is
   * computed first, then merged into `sparse` in document order: adding straight into a score per
   * document meant a cache miss in an 8 MB array for every posting at a million documents, and
   * took 55-80 ns a posting against 35-40 ns this way. The documents' lengths are read a chunk at a
   * time ahead of the scoring (see gatherLengths).
   */
  scoreWhole(term: ScoredTerm, field: number, exclusion: Uint32Array | null): void {
    const { list } = term;
    this.decodePostings(list);
    for (let start = 0; start < list.count; start += LENGTHS_CHUNK) {
      const end = Math.min(list.count, start + LENGTHS_CHUNK);
      this.gatherLengths(start, end);
      this.scoreChunk(term, field, exclusion, start, end);
    }
    this.sparse.add(this.postingDocuments, this.postingScores, list.count, this.index.documents);
  }

  /** A sparse list's documents and frequency bytes, into `postingDocuments` and `postingFrequencies`. */
  decodePostings(list: PostingList): void {
    if (this.postingDocuments.length < list.count) {
      const size = Math.min(list.count * 2, this.index.documents);
      this.postingDocuments = new Int32Array(size);
      this.postingScores = new Float64Array(size);
      this.postingFrequencies = new Uint8Array(size);
    }
    list.decode(this.postingDocuments, this.postingFrequencies);
  }

  /**
   * The lengths of the documents of postings `start` to `end` (of `postingDocuments`), into
   * `chunkLengths`. A loop of loads alone: its cache misses overlap, where a loop that also
   * scores them took 30% longer.
   */
  gatherLengths(start: number, end: number): void {
    const { postingDocuments: documents, chunkLengths } = this;
    const { lengths, wideLengths } = this.index;
    for (let index = start; index < end; index++) {
      const document = documents[index];
      const position = 2 * (index - start);
      const packed = lengths[document];
      if (packed !== WIDE) {
        chunkLengths[position] = packed >>> TEXT_BITS;
        chunkLengths[position + 1] = packed & TEXT_MASK;
      } else {
        chunkLengths[position] = wideLengths![2 * document];
        chunkLengths[position + 1] = wideLengths![2 * document + 1];
      }
    }
  }

  /**
   * What postings `start` to `end` of the term add to their documents' scores, into
   * `postingScores`, with the lengths gathered into `chunkLengths`.
   */
  scoreChunk(term: ScoredTerm, field: number, exclusion: Uint32Array | null, start: number, end: number): void {
    const { k1 } = BM25F;
    const { multiplier } = term;
    const { postingDocuments: documents, postingFrequencies: frequencies, postingScores: added, chunkLengths: lengths } = this;
    const { titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage } = this.index;
    for (let index = start; index < end; index++) {
      const document = documents[index];
      const frequency = frequencies[index];
      const position = 2 * (index - start);
      const pseudo =
        exclusion !== null && (exclusion[document >>> 5] >>> (document & 31)) & 1
          ? 0
          : pseudoFrequency(
              field,
              frequency,
              normOf(titleNorms, lengths[position], titleAverage),
              normOf(textNorms, lengths[position + 1], textAverage),
            );
      added[index] = pseudo === 0 ? 0 : (multiplier * pseudo) / (pseudo + k1);
    }
  }

  offerSparse(best: TopScores): void {
    const { documents, scores, length } = this.sparse;
    for (let index = 0; index < length; index++) best.offer(documents[index], scores[index]);
  }

  /**
   * For scoreBlocks: the documents in `sparse` as bits, each block's highest sparse score, and
   * where each block's documents start in `sparse`.
   */
  indexSparseByBlock(): void {
    const { touchedBits, sparseBounds, sparseStarts } = this;
    const { documents, scores, length } = this.sparse;
    let previousBlock = -1;
    for (let index = 0; index < length; index++) {
      const document = documents[index];
      const block = document >>> BLOCK_SHIFT;
      if (block !== previousBlock) {
        sparseStarts[block] = index;
        previousBlock = block;
      }
      touchedBits[document >>> 5] |= 1 << (document & 31);
      if (scores[index] > sparseBounds[block]) sparseBounds[block] = scores[index];
    }
  }

  clearSparseBlocks(): void {
    const { touchedBits, sparseBounds } = this;
    const { documents, length } = this.sparse;
    for (let index = 0; index < length; index++) {
      const document = documents[index];
      touchedBits[document >>> 5] = 0;
      sparseBounds[document >>> BLOCK_SHIFT] = 0;
    }
  }

  /**
   * A search of one dense term: its block maxima alone are the bounds, so there is nothing to sum
   * and, without exclusions, the total is known. The blocks with the highest maxima are scored
   * first, then every other block whose maximum can still reach the bar; returns the total.
   */
  scoreOneDenseTerm(term: ScoredTerm, field: number, exclusion: Uint32Array | null, best: TopScores): number {
    const bounds = this.index.fieldBounds(term.list, field);
    const { list } = term;
    const inField = bounds.bits ?? list.bits!;
    const blocks = (this.index.documents + 31) >>> 5;
    let total = 0;
    if (exclusion === null) total = bounds.bits === null ? list.count : bounds.documentsInField;
    else for (let word = 0; word < blocks; word++) total += popcount(inField[word] & ~exclusion[word]);
    const { saturation } = bounds;
    const multiplier = (term.multiplier * this.index.boundSlack(bounds)) / SATURATION_STEPS;
    const firstBlocks = new BestBlocks(FIRST_BLOCKS);
    for (let block = 0; block < blocks; block++) if (saturation[block] > firstBlocks.floor) firstBlocks.offer(block, saturation[block]);
    best.takeOthersBest();
    const { chosen } = firstBlocks;
    for (const block of chosen)
      if (multiplier * saturation[block] >= best.threshold) this.scoreBlockOfOneTerm(term, field, exclusion, block, inField, best);
    for (let block = 0; block < blocks; block++) {
      if (multiplier * saturation[block] < best.threshold || saturation[block] === 0) continue;
      if (!chosen.includes(block)) this.scoreBlockOfOneTerm(term, field, exclusion, block, inField, best);
    }
    return total;
  }

  /** Offers the documents of one block (one bitmap word) holding the term in the field and not excluded. */
  scoreBlockOfOneTerm(term: ScoredTerm, field: number, exclusion: Uint32Array | null, word: number, inField: Uint32Array, best: TopScores): void {
    const { k1 } = BM25F;
    const { list, multiplier } = term;
    const scope = inField[word] & (exclusion === null ? -1 : ~exclusion[word]);
    if (scope === 0) return;
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage } = this.index;
    const frequencies = list.frequencies!;
    const listBits = list.bits![word];
    const wordRank = list.groupRanks![word >>> RANK_GROUP_SHIFT] + list.wordRanks![word];
    const first = word << 5;
    for (let rest = scope, visited = 0; rest !== 0; rest ^= rest & -rest, visited++) {
      const lowest = rest & -rest;
      const document = first + 31 - Math.clz32(lowest);
      const pseudo = pseudoFrequency(
        field,
        frequencies[wordRank + postingsBefore(listBits, scope, lowest, visited)],
        normOf(titleNorms, titleLengthAt(lengths, wideLengths, document), titleAverage),
        normOf(textNorms, textLengthAt(lengths, wideLengths, document), textAverage),
      );
      best.offer(document, (multiplier * pseudo) / (pseudo + k1));
    }
  }

  /**
   * Offers the best documents to `best`, scoring only blocks whose bound reaches the k-th best
   * score so far, and returns the total: documents holding a dense term in the field (see
   * fieldBounds) or scored by a sparse one (see scoreWhole), less exclusions. A block's bound: the
   * most the sparse terms gave any of its documents, plus each dense term's best saturated
   * frequency in the block times its multiplier.
   *
   * Within a block the dense terms go rarest (highest multiplier) first, MaxScore style: once what
   * the remaining terms could add at most in this block is below the bar, a document not scored yet
   * cannot reach it, nor can one whose score so far plus that remainder falls short, so the
   * remaining terms are scored only for the documents still able to reach it. A term in nearly
   * every document then costs little, for it can add only a little.
   */
  // One function for the hot loop over every block: its dozen arrays and bars stay in locals.
  scoreBlocks(dense: ScoredTerm[], field: number, exclusion: Uint32Array | null, best: TopScores): number {
    const blocks = (this.index.documents + (1 << BLOCK_SHIFT) - 1) >>> BLOCK_SHIFT;
    const { blockBounds: bounds, sparseBounds, sparseStarts, touchedBits } = this;
    const sparseScores = this.sparse.scores;
    dense.sort((a, b) => b.multiplier - a.multiplier);
    const fieldBounds = dense.map((term) => this.index.fieldBounds(term.list, field));
    const saturations = fieldBounds.map((termBounds) => termBounds.saturation);
    // What a term can add in a block at most: its multiplier, times the slack of its bounds, times
    // the block's saturation bound (in steps).
    const boundMultipliers = dense.map((term, position) => (term.multiplier * this.index.boundSlack(fieldBounds[position])) / SATURATION_STEPS);
    // The documents holding each term in the field searched.
    const bitmaps = dense.map((term, position) => fieldBounds[position].bits ?? term.list.bits!);
    // One pass over the blocks (a block is a bitmap word) for the total, each block's bound, and
    // the blocks with the best bounds (passes over all blocks are about a third of a 3-word search
    // at 1M; one pass instead of four made such searches 4-7% faster). A block with no document
    // left after exclusions gets no bound, so it is never scored. Past three dense terms, the
    // first ones' unions and bounds are summed in passes of their own, three terms a pass.
    const firstBlocks = new BestBlocks(FIRST_BLOCKS);
    let unions = touchedBits;
    let partialBounds = sparseBounds;
    let start = 0;
    for (; start + TERMS_PER_PASS < dense.length; start += TERMS_PER_PASS) {
      this.sumBlocks(blocks, unions, partialBounds, bitmaps, boundMultipliers, saturations, start, this.blockUnions, bounds);
      unions = this.blockUnions;
      partialBounds = bounds;
    }
    const total = this.sumBlocks(blocks, unions, partialBounds, bitmaps, boundMultipliers, saturations, start, null, bounds, exclusion, firstBlocks);
    best.takeOthersBest();
    // The most promising blocks first, to set a high bar early; then every block, in order, that
    // can still clear the bar (which only rises).
    const { k1 } = BM25F;
    const blockScores = new Float64Array(1 << BLOCK_SHIFT);
    const blockSparseScores = new Float64Array(1 << BLOCK_SHIFT);
    // A document's two length normalisations, worked out the first time a term scores it in the
    // block and read again by the other terms.
    const blockTitleNorms = new Float64Array(1 << BLOCK_SHIFT);
    const blockTextNorms = new Float64Array(1 << BLOCK_SHIFT);
    const remainders = new Float64Array(dense.length + 1);
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage } = this.index;
    const scoreBlock = (block: number): void => {
      // One bitmap word per block (BLOCK_SHIFT is 5).
      const word = block;
      const first = word << 5;
      let allowed = exclusion === null ? -1 : ~exclusion[word];
      for (let position = dense.length - 1; position >= 0; position--) {
        remainders[position] = remainders[position + 1] + boundMultipliers[position] * saturations[position][block];
      }
      // A term whose absence leaves a document below the bar, whatever else it holds, is required:
      // only documents holding every required term are scored. The bound without a term is a
      // difference, so it is raised by far more than its rounding: a document exactly at the bar (a
      // tie) must never be dropped.
      const blockBound = sparseBounds[block] + remainders[0];
      const bar = best.threshold - 1e-9 * blockBound;
      for (let position = 0; position < dense.length; position++) {
        if (blockBound - boundMultipliers[position] * saturations[position][block] < bar) allowed &= bitmaps[position][word];
      }
      // Documents with a score so far that may still reach the bar, and every document scored.
      const touched = touchedBits[word];
      let candidates = touched & allowed;
      for (let bits = touched, position = sparseStarts[block]; bits !== 0; bits ^= bits & -bits) {
        blockSparseScores[31 - Math.clz32(bits & -bits)] = sparseScores[position++];
      }
      let scored = 0;
      let normed = 0;
      for (let position = 0; position < dense.length; position++) {
        const { list, multiplier } = dense[position];
        const threshold = best.threshold;
        const remainder = remainders[position];
        let scope = allowed;
        if (remainder < threshold) {
          let check = candidates;
          while (check !== 0) {
            const lowest = check & -check;
            const document = first + 31 - Math.clz32(lowest);
            if (blockScores[document - first] + blockSparseScores[document - first] + remainder < threshold) candidates ^= lowest;
            check ^= lowest;
          }
          scope = candidates;
        }
        const inScope = bitmaps[position][word] & scope;
        if (inScope === 0) continue;
        // A posting is found by rank among all the list's documents, whatever the field: the
        // postings before the word, plus the list's documents before it in the word (see
        // postingsBefore).
        const listBits = list.bits![word];
        const wordRank = list.groupRanks![word >>> RANK_GROUP_SHIFT] + list.wordRanks![word];
        const frequencies = list.frequencies!;
        candidates |= inScope;
        scored |= inScope;
        for (let rest = inScope, visited = 0; rest !== 0; rest ^= rest & -rest, visited++) {
          const lowest = rest & -rest;
          const document = first + 31 - Math.clz32(lowest);
          const frequency = frequencies[wordRank + postingsBefore(listBits, inScope, lowest, visited)];
          const slot = document - first;
          if ((normed & lowest) === 0) {
            normed |= lowest;
            blockTitleNorms[slot] = normOf(titleNorms, titleLengthAt(lengths, wideLengths, document), titleAverage);
            blockTextNorms[slot] = normOf(textNorms, textLengthAt(lengths, wideLengths, document), textAverage);
          }
          const pseudo = pseudoFrequency(field, frequency, blockTitleNorms[slot], blockTextNorms[slot]);
          blockScores[slot] += (multiplier * pseudo) / (pseudo + k1);
        }
      }
      while (candidates !== 0) {
        const lowest = candidates & -candidates;
        const document = first + 31 - Math.clz32(lowest);
        best.offer(document, blockScores[document - first] + blockSparseScores[document - first]);
        candidates ^= lowest;
      }
      while (scored !== 0) {
        const lowest = scored & -scored;
        blockScores[31 - Math.clz32(lowest)] = 0;
        scored ^= lowest;
      }
      for (let bits = touched; bits !== 0; bits ^= bits & -bits) blockSparseScores[31 - Math.clz32(bits & -bits)] = 0;
    };
    for (const block of firstBlocks.chosen) {
      if (bounds[block] >= best.threshold) scoreBlock(block);
      bounds[block] = 0;
    }
    best.takeOthersBest();
    for (let block = 0; block < blocks; block++) {
      const bound = bounds[block];
      if (bound !== 0 && bound >= best.threshold) scoreBlock(block);
    }
    return total;
  }

  /**
   * For every block, the union of `unions` with the bitmaps of dense terms `start` to
   * `start + TERMS_PER_PASS - 1` (those there are) and their bounds added to `partialBounds`, into
   * `unionsOut` and `bounds`. Without `unionsOut` it is the last pass: exclusions applied, blocks
   * left empty get bound 0, the others are offered to `firstBlocks`, and the documents are counted.
   * Up to three terms in variables of their own: a loop over arrays of arrays was 2-2.5x slower.
   */
  sumBlocks(
    blocks: number,
    unions: Uint32Array,
    partialBounds: Float64Array,
    bitmaps: Uint32Array[],
    multipliers: number[],
    saturations: Uint8Array[],
    start: number,
    unionsOut: Uint32Array | null,
    bounds: Float64Array,
    exclusion: Uint32Array | null = null,
    firstBlocks: BestBlocks | null = null,
  ): number {
    const bits0 = bitmaps[start];
    const saturation0 = saturations[start];
    const multiplier0 = multipliers[start];
    const bits1 = bitmaps[start + 1] ?? null;
    const saturation1 = saturations[start + 1] ?? null;
    const multiplier1 = multipliers[start + 1] ?? 0;
    const bits2 = bitmaps[start + 2] ?? null;
    const saturation2 = saturations[start + 2] ?? null;
    const multiplier2 = multipliers[start + 2] ?? 0;
    let total = 0;
    for (let block = 0; block < blocks; block++) {
      let union = unions[block] | bits0[block];
      let bound = partialBounds[block] + multiplier0 * saturation0[block];
      if (bits1 !== null) {
        union |= bits1[block];
        bound += multiplier1 * saturation1![block];
        if (bits2 !== null) {
          union |= bits2[block];
          bound += multiplier2 * saturation2![block];
        }
      }
      if (unionsOut !== null) {
        unionsOut[block] = union;
        bounds[block] = bound;
        continue;
      }
      if (exclusion !== null) union &= ~exclusion[block];
      if (union === 0) {
        bounds[block] = 0;
        continue;
      }
      total += popcount(union);
      bounds[block] = bound;
      firstBlocks!.offer(block, bound);
    }
    return total;
  }

  resizeWorkingMemory(capacity: number): void {
    this.touchedBits = new Uint32Array(capacity >>> 5);
    this.sparseBounds = new Float64Array((capacity >>> BLOCK_SHIFT) + 1);
    this.sparseStarts = new Int32Array((capacity >>> BLOCK_SHIFT) + 1);
    this.blockBounds = new Float64Array((capacity >>> BLOCK_SHIFT) + 1);
    this.blockUnions = new Uint32Array(capacity >>> 5);
    this.exclusion = new Uint32Array(capacity >>> 5);
  }
}
