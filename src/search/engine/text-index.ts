import { BatchDecoder, type DecodedBatch } from './batch-decoder.js';
import { DocumentLabels, type PackedLabels } from './document-labels.js';
import { DENSE_FRACTION, DENSE_MINIMUM_DOCUMENTS, type FieldBounds, PostingList, popcount, RANK_GROUP_SHIFT, SATURATION_STEPS } from './postings.js';
import { SharedDocuments } from './shared-documents.js';
import { forEachStoredTerm } from './term-vector.js';
import { positionOf, resized } from './typed-arrays.js';

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

/** Title and text together, one of them, or the words of metadata field terms (no length normalisation). */
export type SearchField = 'all' | 'title' | 'text' | 'metadata';

export interface IndexQuery {
  /** Distinct term ids; a document matches when it holds any of them. */
  terms: number[];
  field: SearchField;
  /** Documents allowed by the filters, one bit each; null when unfiltered. */
  filter: Uint32Array | null;
  topK: number;
  /**
   * The best scores, best first, that another share of the corpus has found for this query (empty
   * while none has). With this share's own hits they set the bar at the k-th best of both: a hit
   * below it cannot be in the merged top k, so it need not be found (hits tied with it are kept).
   * Asked at the start and again between a search's stages, as they may come meanwhile.
   */
  othersBest?: () => readonly number[];
}

/**
 * The whole corpus's statistics, for an index that holds a share of its documents (see
 * ShardedIndex): scores are then the ones an index of every document would give.
 */
export interface CorpusStatistics {
  liveDocuments: number;
  titleTotal: number;
  textTotal: number;
  /** Live documents holding each of the query's terms, in the order of `IndexQuery.terms`. */
  documentFrequencies: number[];
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

/**
 * Sparse terms in at most this share of the documents are rare: a search with rare and other terms
 * scores first the documents holding a rare term (see searchFromRareTerms). At a million documents,
 * 1/16 to 1/128 measured the same within the noise; 1/8 (then every sparse term rare) 5-10%
 * slower. With terms dense from 1/32 (session 22), 1/32 measured the same as 1/64 (3 words) and
 * 7% slower (8 words).
 */
export const RARE_FRACTION = 1 / 64;
/** Ties at the cut beyond this many are broken by document order rather than handed back. */
const MAX_TIED = 1000;
/**
 * Documents per block of the block-max bounds: one bitmap word, which scoreBlocks relies on
 * (measured: 256 and 64 bound too loosely).
 */
const BLOCK_SHIFT = 5;
/** Postings whose documents' lengths are read ahead of scoring them (see gatherLengths). */
const LENGTHS_CHUNK = 2048;
/** Dense terms summed per pass over the blocks (see sumBlocks). */
const TERMS_PER_PASS = 3;
/** Blocks scored first, best bounds first, to raise the bar before the pass over all blocks. */
const FIRST_BLOCKS = 32;
/** What a slice of a trim copies at most, past its first list: a few milliseconds' work. */
const TRIM_SLICE_BYTES = 4 << 20;
/** Lengths whose normalisations are kept in a table: longer titles and texts have theirs computed. */
const NORM_TABLE_SIZE = 4096;
/** A title's length takes the top TITLE_BITS of a document's 16 bits in `TextIndex.lengths`, its text's the rest. */
const TITLE_BITS = 5;
const TEXT_BITS = 16 - TITLE_BITS;
const TEXT_MASK = (1 << TEXT_BITS) - 1;
/** In `TextIndex.lengths`: the lengths did not fit and are kept whole in `wideLengths`. */
const WIDE = 0xffff;
/**
 * How loose block bounds may grow, as the averages move, before they are computed anew: 2% more
 * blocks pass the bar at worst, where recomputing costs a pass over a common term's postings.
 */
const MAX_BOUND_SLACK = 1.02;
/**
 * Documents whose postings one step of warmBoundsInSlices walks: a step holds a search thread, and
 * the commonest term's whole list took 60 ms at a million documents (session 16); 65,536 documents
 * are a few milliseconds.
 */
const WARM_STEP_DOCUMENTS = 65_536;

interface ScoredTerm {
  termId: number;
  list: PostingList;
  /** idf x (k1 + 1): the term's score is this times its saturated frequency, which is below 1. */
  multiplier: number;
}

/**
 * The full-text index of the corpus, in memory: postings per term id (see postings.ts), document
 * lengths and BM25F normalisations, and deletions as a bitmap (a deleted document's postings stay
 * until the next rebuild, skipped). Documents are numbered in the order they are added, which is
 * the order of their row ids, so row ids map back by binary search.
 *
 * Search is exact top-k with block-max pruning, over title and text or over one field. Rare
 * (sparse) terms are scored whole into an accumulator. Common (dense) terms are not: each keeps,
 * per field searched and block of 32 documents, the highest saturated frequency in the block, so
 * every block has an upper bound on any of its documents' scores. The blocks with the best bounds
 * are scored first, to set a high bar; then only the blocks whose bound still reaches the k-th
 * best score found so far are scored. Totals are exact: the union of the terms' documents (in the
 * field) as a bitmap.
 *
 * A search with rare terms (in at most RARE_FRACTION of the documents) and commoner ones first
 * tries MaxScore with the rare terms as the only essential ones (searchFromRareTerms): at a million
 * documents, that is most searches of a few words, and it spares them the pass over every block.
 */
export class TextIndex {
  private documents = 0;
  private capacity = 0;
  private rowids = new Float64Array(0);
  /**
   * Per document, its title's and its text's lengths in one 16-bit word (TITLE_BITS and TEXT_BITS):
   * scoring reads them for every posting, in no useful order, so their bytes decide how many of
   * those reads miss the caches. 16 bits a field made 3-word searches 14% faster than 32 at a
   * million documents on one thread (session 17). A document whose title is 31 words or longer,
   * or whose text is 2,047 or longer, is marked WIDE and has both lengths whole in `wideLengths`
   * (2 x number and the next), allocated when the first such document comes.
   */
  private lengths = new Uint16Array(0);
  private wideLengths: Uint32Array | null = null;
  /**
   * Length normalisations by length, for the lengths below NORM_TABLE_SIZE, against the current
   * averages: a new document or a deletion moves the averages, and recomputing a table is 8,192
   * divisions where a per-document array was two million (8 ms at a million documents, before every
   * search after any change). Lucene caches its BM25 norms by length the same way.
   */
  private readonly titleNorms = new Float32Array(NORM_TABLE_SIZE);
  private readonly textNorms = new Float32Array(NORM_TABLE_SIZE);
  private deleted = new Uint32Array(0);
  private deletedCount = 0;
  private live = 0;
  private titleTotal = 0;
  private textTotal = 0;
  private normTitleAverage = -1;
  private normTextAverage = -1;
  private lists: Array<PostingList | undefined> = [];
  /**
   * Per-search working memory, kept across searches: at a million documents, allocating it anew
   * (hundreds of kilobytes a search) made the garbage collector pause requests for 20 ms.
   * `touchedBits`: the documents in `sparse`, as bits; all zero between searches.
   */
  private touchedBits = new Uint32Array(0);
  /** Per block, the highest score sparse terms gave a document in it; all zero between searches. */
  private sparseBounds = new Float64Array(0);
  /** Per block holding documents in `sparse`, the position of its first one there. */
  private sparseStarts = new Int32Array(0);
  private exclusion = new Uint32Array(0);
  private blockBounds = new Float64Array(0);
  /** Per block, the union of the documents of the terms summed so far (scoreBlocks, past three dense terms). */
  private blockUnions = new Uint32Array(0);
  /** The list being scored whole: its postings' documents, frequency bytes, and what each adds to the score. */
  private postingDocuments = new Int32Array(0);
  private postingScores = new Float64Array(0);
  private postingFrequencies = new Uint8Array(0);
  private readonly chunkLengths = new Uint32Array(2 * LENGTHS_CHUNK);
  /** For searchFromRareTerms: per candidate, what dense terms add, and its title and text norms. */
  private candidateDenseScores = new Float64Array(0);
  private candidateNorms = new Float64Array(0);
  private selected = new Int32Array(0);
  /** For narrowCandidates: the selected candidates' scores so far. */
  private narrowingScores = new Float64Array(0);
  private readonly sparse = new SparseScores();
  private readonly sharedDocuments = new SharedDocuments();
  private decoder = new BatchDecoder();
  private readonly labels = new DocumentLabels();

  get liveDocuments(): number {
    return this.live;
  }

  /** Deleted documents whose postings the index still holds (skipped by every search). */
  get deletedDocuments(): number {
    return this.deletedCount;
  }

  get highestRowid(): number {
    return this.documents === 0 ? 0 : this.rowids[this.documents - 1];
  }

  /**
   * Adds documents whose row ids are all above every row id added before, with their doc_ids and
   * titles when given (see labelOf).
   */
  add(batch: IndexedDocument[], labels?: PackedLabels): void {
    if (batch.length > 0) this.addDecoded(this.decoder.decode(batch, this.documents), labels);
  }

  /**
   * Adds a batch decoded for this index (its first document numbered as the index's next), by
   * `decode` here or by a BatchDecoder on another thread.
   */
  addDecoded(batch: DecodedBatch, labels?: PackedLabels): void {
    this.labels.add(this.documents, labels);
    for (const _ of this.addDecodedInSlices(batch, Infinity));
  }

  /** The bytes of doc_ids and titles this index holds, for an index built to replace it (see expectLabels). */
  get labelBytes(): number {
    return this.labels.bytesUsed;
  }

  /** Makes room for the doc_ids and titles of `documents` documents, `bytes` in all (see DocumentLabels.expect). */
  expectLabels(documents: number, bytes: number): void {
    this.labels.expect(documents, bytes);
  }

  /** The doc_id and title added with the document of this row id; undefined if none were, or for a row id never added. */
  labelOf(rowid: number): { docId: string; title: string } | undefined {
    return this.labels.at(this.documentOf(rowid));
  }

  /**
   * Adds documents as `add` does, pausing after every `termsPerSlice` terms' postings, so that a
   * thread can answer searches of its other indexes in between. Until the last slice, this index
   * is half-built: no search of it, nor other change to it, may come in between.
   */
  *addInSlices(batch: IndexedDocument[], termsPerSlice: number): Generator<void, void, void> {
    if (batch.length > 0) yield* this.addDecodedInSlices(this.decoder.decode(batch, this.documents), termsPerSlice);
  }

  private *addDecodedInSlices(batch: DecodedBatch, termsPerSlice: number): Generator<void, void, void> {
    const count = batch.rowids.length;
    if (count === 0) return;
    this.ensureCapacity(this.documents + count);
    this.rowids.set(batch.rowids, this.documents);
    this.setLengths(batch.lengths, this.documents);
    this.documents += count;
    this.live += count;
    this.titleTotal += batch.titleTotal;
    this.textTotal += batch.textTotal;
    let start = 0;
    for (let index = 0; index < batch.terms.length; index++) {
      const termId = batch.terms[index];
      let list = this.lists[termId];
      if (!list) this.lists[termId] = list = new PostingList();
      const end = batch.ends[index];
      list.appendRun(batch.documents, batch.frequencies, start, end);
      start = end;
      if ((index + 1) % termsPerSlice === 0) yield;
    }
    if (this.documents >= DENSE_MINIMUM_DOCUMENTS) {
      const threshold = this.documents * DENSE_FRACTION;
      for (const list of this.lists) if (list && !list.dense && list.count >= threshold) list.makeDense(this.capacity);
    }
  }

  /** `lengths`: title and text length of each document from number `first` on, side by side. */
  private setLengths(lengths: Uint32Array, first: number): void {
    for (let index = 0; 2 * index < lengths.length; index++) {
      const title = lengths[2 * index];
      const text = lengths[2 * index + 1];
      const document = first + index;
      if (title < (1 << TITLE_BITS) - 1 && text < TEXT_MASK) {
        this.lengths[document] = (title << TEXT_BITS) | text;
        continue;
      }
      this.wideLengths ??= new Uint32Array(2 * this.capacity);
      this.wideLengths[2 * document] = title;
      this.wideLengths[2 * document + 1] = text;
      this.lengths[document] = WIDE;
    }
  }

  /** Marks the document with this row id deleted; `terms` is its stored term vector. */
  remove(rowid: number, terms: Uint8Array): void {
    const number = this.documentOf(rowid);
    if (number < 0 || this.isDeleted(number)) return;
    this.deleted[number >>> 5] |= 1 << (number & 31);
    this.deletedCount++;
    this.live--;
    this.titleTotal -= titleLengthAt(this.lengths, this.wideLengths, number);
    this.textTotal -= textLengthAt(this.lengths, this.wideLengths, number);
    forEachStoredTerm(terms, (termId) => {
      const list = this.lists[termId];
      if (list) list.liveCount--;
    });
  }

  /** Gives back growth slack after a bulk load, and the bulk load's working memory. */
  trim(): void {
    for (const _ of this.trimInSlices(Infinity));
  }

  /**
   * Trims as `trim` does, pausing after every `listsPerSlice` lists, or sooner once a slice has
   * copied `bytesPerSlice` (see addInSlices): the commonest terms come first, and the slice that
   * copied them held a search thread for over 100 ms at a million documents (session 15).
   */
  *trimInSlices(listsPerSlice: number, bytesPerSlice = TRIM_SLICE_BYTES): Generator<void, void, void> {
    let lists = 0;
    let bytes = 0;
    for (let termId = 0; termId < this.lists.length; termId++) {
      bytes += this.lists[termId]?.trim() ?? 0;
      if (++lists >= listsPerSlice || bytes >= bytesPerSlice) {
        lists = 0;
        bytes = 0;
        yield;
      }
    }
    this.labels.trim();
    this.decoder = new BatchDecoder();
  }

  /**
   * Computes ahead, `documentsPerStep` documents of one dense term a step, the block bounds that
   * searches of title and text (the default field) use, with the average lengths those searches
   * will bring. A search otherwise computed them for each common term on its first use, over all
   * its postings, and the first searches after a start or a rebuild's hand-over waited for many of
   * them at once (0.6-1.5 s under load at a million documents, session 16).
   */
  *warmBoundsInSlices(titleAverage: number, textAverage: number, documentsPerStep = WARM_STEP_DOCUMENTS): Generator<void, void, void> {
    const step = Math.max(32, documentsPerStep & ~31);
    for (const list of this.lists) {
      if (!list?.dense || list.liveCount === 0) continue;
      for (let upTo = step; ; upTo += step) {
        // Searches in between set the norms to their own averages.
        this.updateNorms(titleAverage, textAverage);
        this.fieldBounds(list, FIELD_CODES.all, upTo);
        yield;
        if (upTo >= this.documents) break;
      }
    }
  }

  documentOf(rowid: number): number {
    return positionOf(this.rowids, this.documents, rowid);
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

  /** The whole corpus's statistics as far as this index knows: its own, unless it holds a share. */
  statisticsFor(termIds: number[]): CorpusStatistics {
    return {
      liveDocuments: this.live,
      titleTotal: this.titleTotal,
      textTotal: this.textTotal,
      documentFrequencies: termIds.map((termId) => this.lists[termId]?.liveCount ?? 0),
    };
  }

  /** Scored with `statistics` when given (this index holding a share of the corpus), else with its own. */
  search(query: IndexQuery, statistics?: CorpusStatistics): IndexResult {
    if (this.live === 0) return { total: 0, hits: [] };
    const { liveDocuments, titleTotal, textTotal, documentFrequencies } = statistics ?? this.statisticsFor(query.terms);
    this.updateNorms(titleTotal / liveDocuments, textTotal / liveDocuments);
    const { k1 } = BM25F;
    const terms: ScoredTerm[] = [];
    for (let position = 0; position < query.terms.length; position++) {
      const list = this.lists[query.terms[position]];
      if (!list || list.liveCount === 0) continue;
      const frequency = documentFrequencies[position];
      const idf = Math.log(1 + (liveDocuments - frequency + 0.5) / (frequency + 0.5));
      terms.push({ termId: query.terms[position], list, multiplier: idf * (k1 + 1) });
    }
    if (terms.length === 0) return { total: 0, hits: [] };
    const exclusion = this.exclusionFor(query.filter);
    const field = FIELD_CODES[query.field];
    const sparse = this.sparse;
    sparse.length = 0;
    const rareLimit = this.documents * RARE_FRACTION;
    const rare = terms.filter((term) => !term.list.dense && term.list.count <= rareLimit);
    const othersBest = query.othersBest ?? noneBest;
    if (rare.length > 0 && rare.length < terms.length) {
      const others = terms.filter((term) => !rare.includes(term));
      const result = this.searchFromRareTerms(rare, others, field, exclusion, query.topK, othersBest);
      if (result !== undefined) return result;
      sparse.length = 0;
    }
    const best = new TopScores(query.topK, othersBest);
    const dense = terms.filter((term) => term.list.dense);
    for (const term of terms) if (!term.list.dense) this.scoreWhole(term, field, exclusion);
    let total: number;
    if (dense.length === 0) {
      total = sparse.length;
      this.offerSparse(best);
    } else if (terms.length === 1) {
      total = this.scoreOneDenseTerm(dense[0], field, exclusion, best);
    } else {
      this.indexSparseByBlock();
      total = this.scoreBlocks(dense, field, exclusion, best);
      this.clearSparseBlocks();
    }
    return { total, hits: best.hits().map(({ document, score }) => ({ document, rowid: this.rowids[document], score })) };
  }

  /**
   * MaxScore with the rare terms as the essential ones: the documents holding a rare term are
   * scored in full (the other terms' postings looked up for them alone), and if the k-th best of
   * those scores is above the most the other terms together can give, no document without a rare
   * term can reach the top k, so none is scored. Their postings are still counted for the total.
   * Undefined when that does not hold: then the search is done the general way.
   */
  private searchFromRareTerms(
    rare: ScoredTerm[],
    others: ScoredTerm[],
    field: number,
    exclusion: Uint32Array | null,
    topK: number,
    othersBest: () => readonly number[],
  ): IndexResult | undefined {
    for (const term of rare) this.scoreWhole(term, field, exclusion);
    const othersKth = othersBest()[topK - 1] ?? 0;
    const { documents: candidates, scores: sparseScores, length } = this.sparse;
    if (length < topK) return undefined;
    // Dense terms summed in the order scoreBlocks sums them, rarest first.
    const dense = others.filter((term) => term.list.dense).sort((a, b) => b.multiplier - a.multiplier);
    const commoner = others.filter((term) => !term.list.dense);
    const fieldBounds = dense.map((term) => this.fieldBounds(term.list, field));
    // The most each dense term can add, and the most the terms after it can add together.
    const denseTermHighest = dense.map(
      (term, position) => (term.multiplier * this.boundSlack(fieldBounds[position]) * fieldBounds[position].highest) / SATURATION_STEPS,
    );
    const denseHighestAfter = new Array<number>(dense.length).fill(0);
    for (let position = dense.length - 2; position >= 0; position--)
      denseHighestAfter[position] = denseHighestAfter[position + 1] + denseTermHighest[position + 1];
    let denseHighest = 0;
    for (const highest of denseTermHighest) denseHighest += highest;
    let othersHighest = denseHighest;
    for (const term of commoner) othersHighest += term.multiplier;
    const touched = this.touchedBits;
    for (const term of commoner) this.addSparseToCandidates(term, field);
    const bitmaps = dense.map((term, position) => fieldBounds[position].bits ?? term.list.bits!);
    // Candidates are counted here, or with the commoner sparse terms' documents when there are any.
    let outsideDense = 0;
    if (commoner.length === 0) {
      outsideDense = length - countInAny(candidates, length, bitmaps);
    } else {
      for (let index = 0; index < length; index++) touched[candidates[index] >>> 5] |= 1 << (candidates[index] & 31);
    }
    // The k-th best score without the dense terms (or another share's k-th best, if higher) is a
    // bar no document below it can clear with less than what they can add at most: those are not
    // looked up.
    let selected = this.selectCandidates(Math.max(kthHighest(sparseScores, length, topK), othersKth) - denseHighest, length);
    const denseScores = this.candidateScores(selected);
    // Dense terms rarest first, MaxScore style: after each, a candidate whose score so far plus the
    // most the terms left can add falls below the k-th best score so far cannot reach the top k.
    for (let position = 0; position < dense.length; position++) {
      this.addDenseToCandidates(dense[position], field, denseScores, selected);
      if (position < dense.length - 1 && selected.length > topK)
        selected = this.narrowCandidates(selected, denseScores, denseHighestAfter[position], topK, othersKth);
    }
    const best = new TopScores(topK, othersBest);
    for (let position = 0; position < selected.length; position++) {
      const index = selected[position];
      best.offer(candidates[index], denseScores[index] + sparseScores[index]);
    }
    if (!(best.threshold > othersHighest)) {
      if (commoner.length > 0) touched.fill(0);
      return undefined;
    }
    let total: number;
    if (commoner.length === 0 && dense.length <= 2 && exclusion === null) {
      const inField = (position: number) =>
        fieldBounds[position].bits === null ? dense[position].list.count : fieldBounds[position].documentsInField;
      total = outsideDense + inField(0);
      if (dense.length === 2) {
        const [first, second] = dense[0].termId < dense[1].termId ? [0, 1] : [1, 0];
        const pair = `${field}:${dense[first].termId}:${dense[second].termId}`;
        total += inField(1) - this.sharedDocuments.count(pair, bitmaps[first], bitmaps[second], this.documents);
      }
    } else {
      total = outsideDense + unionCount(bitmaps, commoner.length > 0 ? touched : null, exclusion, (this.documents + 31) >>> 5, this.blockUnions);
      if (commoner.length > 0) touched.fill(0);
    }
    return { total, hits: best.hits().map(({ document, score }) => ({ document, rowid: this.rowids[document], score })) };
  }

  /**
   * A zeroed score per candidate (by position in `sparse`) for the `selected` ones, kept from search
   * to search; and their norms into `candidateNorms`, read once for every term looked up.
   */
  private candidateScores(selected: Int32Array): Float64Array {
    if (this.candidateDenseScores.length < this.sparse.length) {
      this.candidateDenseScores = new Float64Array(Math.min(2 * this.sparse.length, this.documents));
      this.candidateNorms = new Float64Array(2 * this.candidateDenseScores.length);
    }
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage, candidateNorms: norms } = this;
    const scores = this.candidateDenseScores;
    const candidates = this.sparse.documents;
    for (let position = 0; position < selected.length; position++) {
      const index = selected[position];
      const document = candidates[index];
      scores[index] = 0;
      norms[2 * index] = normOf(titleNorms, titleLengthAt(lengths, wideLengths, document), titleAverage);
      norms[2 * index + 1] = normOf(textNorms, textLengthAt(lengths, wideLengths, document), textAverage);
    }
    return scores;
  }

  /**
   * The `selected` candidates (positions in `sparse`) whose score so far, sparse and `denseScores`,
   * plus `highestLeft` reaches the k-th best score so far, in place. The bar is lowered by far more
   * than the sums' rounding, so that a document tied at the cut is never dropped.
   */
  private narrowCandidates(selected: Int32Array, denseScores: Float64Array, highestLeft: number, topK: number, othersKth: number): Int32Array {
    const sparseScores = this.sparse.scores;
    if (this.narrowingScores.length < selected.length) this.narrowingScores = new Float64Array(this.selected.length);
    const scores = this.narrowingScores;
    for (let position = 0; position < selected.length; position++)
      scores[position] = denseScores[selected[position]] + sparseScores[selected[position]];
    const kth = Math.max(kthHighest(scores, selected.length, topK), othersKth);
    const bar = kth - 1e-9 * kth - highestLeft;
    let count = 0;
    for (let position = 0; position < selected.length; position++) if (scores[position] >= bar) selected[count++] = selected[position];
    return selected.subarray(0, count);
  }

  /** The positions in `sparse` of the first `length` candidates whose score there reaches `bar`. */
  private selectCandidates(bar: number, length: number): Int32Array {
    if (this.selected.length < length) this.selected = new Int32Array(Math.min(2 * length, this.documents));
    const { selected } = this;
    const scores = this.sparse.scores;
    let count = 0;
    for (let index = 0; index < length; index++) if (scores[index] >= bar) selected[count++] = index;
    return selected.subarray(0, count);
  }

  /** Adds a dense term's score to the `selected` candidates' `scores`, with their norms in `candidateNorms`. */
  private addDenseToCandidates(term: ScoredTerm, field: number, scores: Float64Array, selected: Int32Array): void {
    const { k1 } = BM25F;
    const { list, multiplier } = term;
    const bits = list.bits!;
    const groupRanks = list.groupRanks!;
    const wordRanks = list.wordRanks!;
    const frequencies = list.frequencies!;
    const { candidateNorms: norms } = this;
    const candidates = this.sparse.documents;
    for (let position = 0; position < selected.length; position++) {
      const index = selected[position];
      const document = candidates[index];
      const word = bits[document >>> 5];
      const bit = 1 << (document & 31);
      if ((word & bit) === 0) continue;
      const frequency = frequencies[groupRanks[(document >>> 5) >>> RANK_GROUP_SHIFT] + wordRanks[document >>> 5] + popcount(word & (bit - 1))];
      const pseudo = pseudoFrequency(field, frequency, norms[2 * index], norms[2 * index + 1]);
      if (pseudo !== 0) scores[index] += (multiplier * pseudo) / (pseudo + k1);
    }
  }

  /**
   * Adds a sparse term's score to the documents in `sparse` holding it (decoding its documents, not
   * scoring them), and marks every document holding it in the field in `touchedBits`, for the total.
   */
  private addSparseToCandidates(term: ScoredTerm, field: number): void {
    const { list, multiplier } = term;
    this.decodePostings(list);
    const { postingDocuments: postings, postingFrequencies: frequencies } = this;
    const { k1 } = BM25F;
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage, touchedBits: touched } = this;
    const { documents: candidates, scores, length } = this.sparse;
    let candidate = 0;
    for (let index = 0; index < list.count; index++) {
      const document = postings[index];
      const frequency = frequencies[index];
      if (pseudoFrequency(field, frequency, 1, 1) === 0) continue;
      touched[document >>> 5] |= 1 << (document & 31);
      while (candidate < length && candidates[candidate] < document) candidate++;
      if (candidate < length && candidates[candidate] === document) {
        const pseudo = pseudoFrequency(
          field,
          frequency,
          normOf(titleNorms, titleLengthAt(lengths, wideLengths, document), titleAverage),
          normOf(textNorms, textLengthAt(lengths, wideLengths, document), textAverage),
        );
        scores[candidate] += (multiplier * pseudo) / (pseudo + k1);
      }
    }
  }

  /**
   * Adds a term's score to every document holding it (in the field). What each posting adds is
   * computed first, then merged into `sparse` in document order: adding straight into a score per
   * document meant a cache miss in an 8 MB array for every posting at a million documents, and
   * took 55-80 ns a posting against 35-40 ns this way. The documents' lengths are read a chunk at a
   * time ahead of the scoring (see gatherLengths).
   */
  private scoreWhole(term: ScoredTerm, field: number, exclusion: Uint32Array | null): void {
    const { list } = term;
    this.decodePostings(list);
    for (let start = 0; start < list.count; start += LENGTHS_CHUNK) {
      const end = Math.min(list.count, start + LENGTHS_CHUNK);
      this.gatherLengths(start, end);
      this.scoreChunk(term, field, exclusion, start, end);
    }
    this.sparse.add(this.postingDocuments, this.postingScores, list.count, this.documents);
  }

  /** A sparse list's documents and frequency bytes, into `postingDocuments` and `postingFrequencies`. */
  private decodePostings(list: PostingList): void {
    if (this.postingDocuments.length < list.count) {
      const size = Math.min(list.count * 2, this.documents);
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
  private gatherLengths(start: number, end: number): void {
    const { postingDocuments: documents, lengths, wideLengths, chunkLengths } = this;
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
  private scoreChunk(term: ScoredTerm, field: number, exclusion: Uint32Array | null, start: number, end: number): void {
    const { k1 } = BM25F;
    const { multiplier } = term;
    const { postingDocuments: documents, postingFrequencies: frequencies, postingScores: added, chunkLengths: lengths } = this;
    const { titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage } = this;
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

  private offerSparse(best: TopScores): void {
    const { documents, scores, length } = this.sparse;
    for (let index = 0; index < length; index++) best.offer(documents[index], scores[index]);
  }

  /**
   * For scoreBlocks: the documents in `sparse` as bits, each block's highest sparse score, and
   * where each block's documents start in `sparse`.
   */
  private indexSparseByBlock(): void {
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

  private clearSparseBlocks(): void {
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
  private scoreOneDenseTerm(term: ScoredTerm, field: number, exclusion: Uint32Array | null, best: TopScores): number {
    const bounds = this.fieldBounds(term.list, field);
    const { list } = term;
    const inField = bounds.bits ?? list.bits!;
    const blocks = (this.documents + 31) >>> 5;
    let total = 0;
    if (exclusion === null) total = bounds.bits === null ? list.count : bounds.documentsInField;
    else for (let word = 0; word < blocks; word++) total += popcount(inField[word] & ~exclusion[word]);
    const { saturation } = bounds;
    const multiplier = (term.multiplier * this.boundSlack(bounds)) / SATURATION_STEPS;
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
  private scoreBlockOfOneTerm(
    term: ScoredTerm,
    field: number,
    exclusion: Uint32Array | null,
    word: number,
    inField: Uint32Array,
    best: TopScores,
  ): void {
    const { k1 } = BM25F;
    const { list, multiplier } = term;
    const scope = inField[word] & (exclusion === null ? -1 : ~exclusion[word]);
    if (scope === 0) return;
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage } = this;
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
  private scoreBlocks(dense: ScoredTerm[], field: number, exclusion: Uint32Array | null, best: TopScores): number {
    const blocks = (this.documents + (1 << BLOCK_SHIFT) - 1) >>> BLOCK_SHIFT;
    const { blockBounds: bounds, sparseBounds, sparseStarts, touchedBits } = this;
    const sparseScores = this.sparse.scores;
    dense.sort((a, b) => b.multiplier - a.multiplier);
    const fieldBounds = dense.map((term) => this.fieldBounds(term.list, field));
    const saturations = fieldBounds.map((termBounds) => termBounds.saturation);
    // What a term can add in a block at most: its multiplier, times the slack of its bounds, times
    // the block's saturation bound (in steps).
    const boundMultipliers = dense.map((term, position) => (term.multiplier * this.boundSlack(fieldBounds[position])) / SATURATION_STEPS);
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
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage } = this;
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
  private sumBlocks(
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

  /**
   * A dense term's bounds for searches of `field`: per block, an upper bound on its saturated
   * frequency pseudo / (pseudo + k1) there (times its multiplier and boundSlack, an upper bound on
   * its score there); and for one field, the documents holding it in that field. Kept
   * with the list and brought up to date for the documents added since; computed anew only when
   * the averages have moved so far that boundSlack would exceed MAX_BOUND_SLACK. Brought up to
   * date to all its documents, or to those below `upTo` (a multiple of 32) for a step of
   * warmBoundsInSlices.
   */
  private fieldBounds(list: PostingList, field: number, upTo = this.documents): FieldBounds {
    const blocks = (this.capacity >>> BLOCK_SHIFT) + 1;
    const words = this.capacity >>> 5;
    let bounds = list.fieldBounds[field];
    if (bounds === undefined || this.boundSlack(bounds) > MAX_BOUND_SLACK) {
      bounds = {
        saturation: new Uint8Array(blocks),
        highest: 0,
        documentsInField: 0,
        bits: field === 0 ? null : new Uint32Array(words),
        documents: 0,
        titleAverage: this.normTitleAverage,
        textAverage: this.normTextAverage,
      };
      list.fieldBounds[field] = bounds;
    } else {
      if (bounds.saturation.length < blocks) bounds.saturation = resized(bounds.saturation, blocks);
      if (bounds.bits !== null && bounds.bits.length < words) bounds.bits = resized(bounds.bits, words);
    }
    const end = Math.min(upTo, this.documents);
    if (bounds.documents >= end) return bounds;
    const { k1 } = BM25F;
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage } = this;
    const { saturation, bits } = bounds;
    let highest = bounds.highest;
    let documentsInField = bounds.documentsInField;
    list.forEachFrom(
      bounds.documents,
      (document, frequency) => {
        const pseudo = pseudoFrequency(
          field,
          frequency,
          normOf(titleNorms, titleLengthAt(lengths, wideLengths, document), titleAverage),
          normOf(textNorms, textLengthAt(lengths, wideLengths, document), textAverage),
        );
        if (pseudo === 0) return;
        if (bits !== null) {
          bits[document >>> 5] |= 1 << (document & 31);
          documentsInField++;
        }
        // Rounded up to the next step (and the product's rounding allowed for), so the bound never
        // falls below the float64 score; a saturated frequency is below 1, so at most SATURATION_STEPS.
        const value = Math.min(SATURATION_STEPS, Math.ceil((pseudo / (pseudo + k1)) * (1 + 1e-9) * SATURATION_STEPS));
        const block = document >>> BLOCK_SHIFT;
        if (value > saturation[block]) saturation[block] = value;
        if (value > highest) highest = value;
      },
      end,
    );
    bounds.highest = highest;
    bounds.documentsInField = documentsInField;
    bounds.documents = end;
    bounds.titleAverage = Math.min(bounds.titleAverage, titleAverage);
    bounds.textAverage = Math.min(bounds.textAverage, textAverage);
    return bounds;
  }

  /**
   * How much block bounds may have fallen behind since they were computed: a document's length
   * normalisation grows with the average length, by at most the ratio of the new average to the
   * one it was computed with, and a saturated frequency by at most the ratio of its argument's
   * growth; bounds computed with several averages answer for the smallest of them.
   */
  private boundSlack(bounds: FieldBounds): number {
    return Math.max(1, averageRatio(this.normTitleAverage, bounds.titleAverage), averageRatio(this.normTextAverage, bounds.textAverage));
  }

  /** Deleted documents and those outside the filter, as one bitmap; null when there are none. */
  private exclusionFor(filter: Uint32Array | null): Uint32Array | null {
    if (filter === null && this.deletedCount === 0) return null;
    const words = this.capacity >>> 5;
    const exclusion = this.exclusion;
    for (let word = 0; word < words; word++) {
      exclusion[word] = this.deleted[word] | (filter === null ? 0 : ~(filter[word] ?? 0));
    }
    return exclusion;
  }

  private isDeleted(number: number): boolean {
    return ((this.deleted[number >>> 5] >>> (number & 31)) & 1) === 1;
  }

  private ensureCapacity(needed: number): void {
    if (needed <= this.capacity) return;
    const capacity = Math.ceil(Math.max(needed, this.capacity * 1.5, 1024) / 32) * 32;
    this.rowids = resized(this.rowids, capacity);
    this.lengths = resized(this.lengths, capacity);
    if (this.wideLengths !== null) this.wideLengths = resized(this.wideLengths, 2 * capacity);
    this.deleted = resized(this.deleted, capacity >>> 5);
    this.touchedBits = new Uint32Array(capacity >>> 5);
    this.sparseBounds = new Float64Array((capacity >>> BLOCK_SHIFT) + 1);
    this.sparseStarts = new Int32Array((capacity >>> BLOCK_SHIFT) + 1);
    this.blockBounds = new Float64Array((capacity >>> BLOCK_SHIFT) + 1);
    this.blockUnions = new Uint32Array(capacity >>> 5);
    this.exclusion = new Uint32Array(capacity >>> 5);
    for (const list of this.lists) list?.resizeBitmaps(capacity);
    this.capacity = capacity;
  }

  /** The norm tables, recomputed when the average lengths have moved. */
  private updateNorms(titleAverage: number, textAverage: number): void {
    if (titleAverage === this.normTitleAverage && textAverage === this.normTextAverage) return;
    this.normTitleAverage = titleAverage;
    this.normTextAverage = textAverage;
    const { b } = BM25F;
    for (let length = 0; length < NORM_TABLE_SIZE; length++) {
      this.titleNorms[length] = norm(length, titleAverage, b);
      this.textNorms[length] = norm(length, textAverage, b);
    }
  }
}

const FIELD_CODES = { all: 0, title: 1, text: 2, metadata: 3 } as const;

function norm(length: number, average: number, b: number): number {
  return average > 0 ? 1 / (1 - b + (b * length) / average) : 1;
}

/**
 * A posting's pseudo-frequency in the field searched (field codes as in FIELD_CODES), from its
 * frequency byte and its document's title and text normalisations: BM25F's weighted sum for title
 * and text, one field's normalised frequency, or a metadata field's words' count as it is.
 */
function pseudoFrequency(field: number, frequency: number, titleNorm: number, textNorm: number): number {
  return field === 0
    ? BM25F.titleWeight * (frequency >>> 6) * titleNorm + (frequency & 63) * textNorm
    : field === 1
      ? (frequency >>> 6) * titleNorm
      : field === 2
        ? (frequency & 63) * textNorm
        : frequency & 63;
}

/**
 * How many of a dense list's postings in one word (`listBits`) come before the document at bit
 * `lowest`, visiting the word's documents in `scope` lowest first, `visited` of them before this
 * one. When every document of the word is visited, that is `visited`; otherwise they are counted,
 * so that only the documents in scope are visited: stepping through every document of the word
 * to reach them (a common word has a dozen or more in a block) took a quarter of the slowest
 * 3-word searches' time (session 19).
 */
function postingsBefore(listBits: number, scope: number, lowest: number, visited: number): number {
  return scope === listBits ? visited : popcount(listBits & (lowest - 1));
}

/** A document's title length, from `lengths` or, where it is WIDE, from `wide`. */
function titleLengthAt(lengths: Uint16Array, wide: Uint32Array | null, document: number): number {
  const packed = lengths[document];
  return packed === WIDE ? wide![2 * document] : packed >>> TEXT_BITS;
}

/** A document's text length, from `lengths` or, where it is WIDE, from `wide`. */
function textLengthAt(lengths: Uint16Array, wide: Uint32Array | null, document: number): number {
  const packed = lengths[document];
  return packed === WIDE ? wide![2 * document + 1] : packed & TEXT_MASK;
}

/** A length's normalisation from its table, or computed for a length beyond the table. */
function normOf(table: Float32Array, length: number, average: number): number {
  return length < NORM_TABLE_SIZE ? table[length] : norm(length, average, BM25F.b);
}

/** now / then for averages, where a bound computed against an average of 0 answers for nothing else. */
function averageRatio(now: number, then: number): number {
  if (then > 0) return now / then;
  return now > 0 ? Infinity : 1;
}

/**
 * The documents in any of `bitmaps` or in `extra`, less those in `exclusion`, over the first
 * `words` words. Beyond two bitmaps, the first ones' union goes into `scratch`, two a pass.
 */
function unionCount(bitmaps: Uint32Array[], extra: Uint32Array | null, exclusion: Uint32Array | null, words: number, scratch: Uint32Array): number {
  let unions = extra;
  let start = 0;
  for (; bitmaps.length - start > 2; start += 2) {
    const bits0 = bitmaps[start];
    const bits1 = bitmaps[start + 1];
    if (unions === null) for (let word = 0; word < words; word++) scratch[word] = bits0[word] | bits1[word];
    else for (let word = 0; word < words; word++) scratch[word] = unions[word] | bits0[word] | bits1[word];
    unions = scratch;
  }
  const bits0 = bitmaps[start] ?? null;
  const bits1 = bitmaps[start + 1] ?? null;
  let total = 0;
  for (let word = 0; word < words; word++) {
    let union = (unions === null ? 0 : unions[word]) | (bits0 === null ? 0 : bits0[word]) | (bits1 === null ? 0 : bits1[word]);
    if (exclusion !== null) union &= ~exclusion[word];
    total += popcount(union);
  }
  return total;
}

/**
 * How many of the first `length` of `documents` are in any of `bitmaps`. One or two bitmaps in
 * variables of their own: a loop over the array of bitmaps for every document took three times
 * as long (session 21, bench:search's 3-word searches at a million: 55-58 µs a search against 19-20).
 */
function countInAny(documents: Int32Array, length: number, bitmaps: Uint32Array[]): number {
  let count = 0;
  if (bitmaps.length === 1) {
    const bits0 = bitmaps[0];
    for (let index = 0; index < length; index++) {
      const document = documents[index];
      count += (bits0[document >>> 5] >>> (document & 31)) & 1;
    }
  } else if (bitmaps.length === 2) {
    const bits0 = bitmaps[0];
    const bits1 = bitmaps[1];
    for (let index = 0; index < length; index++) {
      const document = documents[index];
      count += ((bits0[document >>> 5] | bits1[document >>> 5]) >>> (document & 31)) & 1;
    }
  } else {
    for (let index = 0; index < length; index++) {
      const document = documents[index];
      let inAny = 0;
      for (const bits of bitmaps) inAny |= bits[document >>> 5];
      count += (inAny >>> (document & 31)) & 1;
    }
  }
  return count;
}

/** kthHighest's heap, kept from call to call: each thread has its own, and a call ends before the next begins. */
let kthHeap = new Float64Array(100);

/** The k-th highest of the first `length` scores (k <= length), with a heap of k. */
function kthHighest(scores: Float64Array, length: number, k: number): number {
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

const noneBest = (): readonly number[] => [];
/** The document of another share's score (see IndexQuery.othersBest): it counts for the bar, and is no hit. */
const ANOTHER_SHARE = -1;

/**
 * The k best (document, score) pairs offered, and every document tied with the k-th, so that
 * the caller can order ties its own way. `threshold` is the k-th best score once k were offered,
 * another share's best scores (IndexQuery.othersBest) among them once known.
 */
class TopScores {
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
class BestBlocks {
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
class SparseScores {
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
