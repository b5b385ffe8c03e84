import { IndexedDocuments } from './indexed-documents.js';
import { phraseHolders } from './phrase-holders.js';
import { newCursor, popcount, RANK_GROUP_SHIFT, SATURATION_STEPS } from './postings.js';
import { countInAny, unionCount } from './scoring/bitmap-counts.js';
import { BM25F, FIELD_CODES, normOf, pseudoFrequency, textLengthAt, titleLengthAt } from './scoring/bm25f.js';
import { type ScoredTerm, TermScorer } from './scoring/term-scoring.js';
import { kthHighest, noneBest, TopScores } from './scoring/top-scores.js';
import { type CorpusStatistics, HELD, HELD_IN_FIELD, type IndexQuery, type IndexResult, type MatchedRows, type SearchField } from './search-index.js';
import { SharedDocuments } from './shared-documents.js';

/**
 * Sparse terms in at most this share of the documents are rare: a search with rare and other terms
 * scores first the documents holding a rare term (see searchFromRareTerms). At a million documents,
 * 1/16 to 1/128 measured the same within the noise; 1/8 (then every sparse term rare) 5-10%
 * slower. With terms dense from 1/32, 1/32 measured the same as 1/64 (3 words) and
 * 7% slower (8 words).
 */
export const RARE_FRACTION = 1 / 64;

/**
 * Documents per range when everyMatch reads many terms (see there): 512 KB of scores, which stay
 * in a core's cache while a prefix's thousands of expansions add to them (2^15 to 2^17 measured alike).
 */
const EVERY_MATCH_RANGE = 1 << 16;

/** The set bits of every 16-bit number, for counting facets. */
const HALF_WORD_BITS = Uint8Array.from({ length: 1 << 16 }, (_, value) => popcount(value));

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
export class TextIndex extends IndexedDocuments {
  private readonly scorer = new TermScorer(this);
  /** For searchFromRareTerms: per candidate, what dense terms add, and its title and text norms. */
  private candidateDenseScores = new Float64Array(0);
  private candidateNorms = new Float64Array(0);
  private selected = new Int32Array(0);
  /** For narrowCandidates: the selected candidates' scores so far. */
  private narrowingScores = new Float64Array(0);
  private readonly sharedDocuments = new SharedDocuments();

  protected resizeWorkingMemory(capacity: number): void {
    this.scorer.resizeWorkingMemory(capacity);
  }

  /** See SearchIndex.termsHeld. */
  termsHeld(rowids: Float64Array, terms: readonly number[], field: SearchField): Uint8Array {
    const held = new Uint8Array(rowids.length * terms.length);
    const rows = Array.from(rowids, (rowid, row) => ({ document: this.documentOf(rowid), row }))
      .filter(({ document }) => document >= 0 && !this.isDeleted(document))
      .sort((a, b) => a.document - b.document);
    const documents = Int32Array.from(rows, ({ document }) => document);
    const inField =
      field === 'title' ? (frequency: number) => frequency >>> 6 > 0 : field === 'text' ? (frequency: number) => (frequency & 63) > 0 : () => true;
    terms.forEach((termId, term) => {
      this.lists[termId]?.forEachOf(documents, (position, frequency) => {
        held[rows[position].row * terms.length + term] = HELD | (inField(frequency) ? HELD_IN_FIELD : 0);
      });
    });
    return held;
  }

  /** Scored with `statistics` when given (this index holding a share of the corpus), else with its own. */
  search(query: IndexQuery, statistics?: CorpusStatistics): IndexResult {
    const result = this.rank(query, statistics);
    return query.facets === undefined ? result : { ...result, facets: this.countFacets(query, query.facets) };
  }

  /**
   * Every match, ascending by row id, with its score (summed term by term in query order), for a
   * sort or a structured query, which need more than the best k: the documents holding a term in
   * the field, or with `matchAll` every document, that the filter allows; with `phrase`, those of
   * them whose field holds it.
   */
  everyMatch(query: IndexQuery, statistics?: CorpusStatistics): MatchedRows {
    if (query.phrase) return this.phraseMatches({ ...query, phrase: query.phrase }, statistics);
    const words = this.capacity >>> 5;
    const matches = new Uint32Array(words);
    const scores = new Float64Array(this.documents);
    const exclusion = this.scorer.exclusionFor(query.filter);
    const allowed = (document: number) => exclusion === null || ((exclusion[document >>> 5] >>> (document & 31)) & 1) === 0;
    if (query.matchAll)
      for (let document = 0; document < this.documents; document++) if (allowed(document)) matches[document >>> 5] |= 1 << (document & 31);
    if (this.live > 0 && query.terms.length > 0) {
      const { liveDocuments, titleTotal, textTotal, documentFrequencies } = statistics ?? this.statisticsFor(query.terms);
      this.updateNorms(titleTotal / liveDocuments, textTotal / liveDocuments);
      const field = FIELD_CODES[query.field];
      const { k1 } = BM25F;
      const scored = query.terms.flatMap((termId, position) => {
        const list = this.lists[termId];
        if (!list || list.liveCount === 0) return [];
        const frequency = documentFrequencies[position];
        const multiplier = Math.log(1 + (liveDocuments - frequency + 0.5) / (frequency + 0.5)) * (k1 + 1);
        const visit = (document: number, frequencyByte: number) => {
          if (!allowed(document) || pseudoFrequency(field, frequencyByte, 1, 1) === 0) return;
          matches[document >>> 5] |= 1 << (document & 31);
          scores[document] += this.postingScore(field, frequencyByte, document, multiplier);
        };
        return [{ list, visit, cursor: newCursor() }];
      });
      // Many terms (a prefix's expansions) are read range by range, each range's scores staying in
      // cache while every term adds to them; each document's sum keeps the terms' order.
      const range = scored.length > 1 ? EVERY_MATCH_RANGE : this.documents;
      for (let start = 0; start < this.documents; start += range)
        for (const { list, visit, cursor } of scored) list.forEachBelow(cursor, start + range, visit);
    }
    let count = 0;
    for (let word = 0; word < words; word++) count += popcount(matches[word]);
    const rowids = new Float64Array(count);
    const matchScores = new Float64Array(count);
    let next = 0;
    for (let word = 0; word < words; word++) {
      let remaining = matches[word];
      while (remaining !== 0) {
        const lowest = remaining & -remaining;
        const document = (word << 5) + 31 - Math.clz32(lowest);
        rowids[next] = this.rowids[document];
        matchScores[next++] = scores[document];
        remaining ^= lowest;
      }
    }
    const facets = query.facets?.map((valueTerms) => valueTerms.map((termId) => this.countIn(termId, matches, words)));
    return { rowids, scores: matchScores, ...(facets ? { facets } : {}) };
  }

  /** What a posting adds to its document's score in everyMatch: BM25F's saturation of its pseudo-frequency, times the term's multiplier. */
  private postingScore(field: number, frequencyByte: number, document: number, multiplier: number): number {
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage } = this;
    const pseudo = pseudoFrequency(
      field,
      frequencyByte,
      normOf(titleNorms, titleLengthAt(lengths, wideLengths, document), titleAverage),
      normOf(textNorms, textLengthAt(lengths, wideLengths, document), textAverage),
    );
    return (multiplier * pseudo) / (pseudo + BM25F.k1);
  }

  /**
   * everyMatch of a phrase: the documents whose field holds it (see phraseHolders), scored as
   * everyMatch scores its terms. Where a term's list keeps no positions, every document holding a
   * term, marked unverified.
   */
  private phraseMatches(query: IndexQuery & { phrase: number[] }, statistics?: CorpusStatistics): MatchedRows {
    const held = phraseHolders(query.phrase, this.lists, query.field, this.scorer.exclusionFor(query.filter));
    if (held === undefined) return { ...this.everyMatch({ ...query, phrase: undefined }, statistics), unverified: true };
    const { documents, frequencies, termIds } = held;
    const scores = new Float64Array(documents.length);
    if (documents.length > 0) {
      const { liveDocuments, titleTotal, textTotal, documentFrequencies } = statistics ?? this.statisticsFor(query.terms);
      this.updateNorms(titleTotal / liveDocuments, textTotal / liveDocuments);
      const field = FIELD_CODES[query.field];
      const { k1 } = BM25F;
      query.terms.forEach((termId, position) => {
        const held = termIds.indexOf(termId);
        if (held < 0) return;
        const frequency = documentFrequencies[position];
        const multiplier = Math.log(1 + (liveDocuments - frequency + 0.5) / (frequency + 0.5)) * (k1 + 1);
        documents.forEach((document, index) => {
          const frequencyByte = frequencies[held][index];
          if (pseudoFrequency(field, frequencyByte, 1, 1) !== 0) scores[index] += this.postingScore(field, frequencyByte, document, multiplier);
        });
      });
    }
    const rowids = Float64Array.from(documents, (document) => this.rowids[document]);
    if (query.facets === undefined) return { rowids, scores };
    const words = this.capacity >>> 5;
    const matches = new Uint32Array(words);
    for (const document of documents) matches[document >>> 5] |= 1 << (document & 31);
    return { rowids, scores, facets: query.facets.map((valueTerms) => valueTerms.map((termId) => this.countIn(termId, matches, words))) };
  }

  /**
   * Per facet, how many matches hold each value term. The matches are built as a bitmap (each
   * term's documents in the field, less the excluded), whichever way the ranking went: the ranking
   * stops early where it can, a facet must count them all. A value's documents are then counted in
   * it, by their bitmap when the value is dense, else posting by posting.
   */
  private countFacets(query: IndexQuery, facets: number[][]): number[][] {
    const words = this.capacity >>> 5;
    const matches = new Uint32Array(words);
    const field = FIELD_CODES[query.field];
    for (const termId of query.terms) {
      const list = this.lists[termId];
      if (!list || list.liveCount === 0) continue;
      if (list.dense) {
        const bits = this.fieldBounds(list, field).bits ?? list.bits!;
        for (let word = 0; word < words; word++) matches[word] |= bits[word];
        continue;
      }
      this.scorer.decodePostings(list);
      for (let index = 0; index < list.count; index++) {
        const document = this.scorer.postingDocuments[index];
        if (pseudoFrequency(field, this.scorer.postingFrequencies[index], 1, 1) !== 0) matches[document >>> 5] |= 1 << (document & 31);
      }
    }
    const exclusion = this.scorer.exclusionFor(query.filter);
    if (exclusion) for (let word = 0; word < words; word++) matches[word] &= ~exclusion[word];
    return facets.map((valueTerms) => valueTerms.map((termId) => this.countIn(termId, matches, words)));
  }

  /** How many documents of the `matches` bitmap hold this term. */
  private countIn(termId: number, matches: Uint32Array, words: number): number {
    const list = this.lists[termId];
    if (!list || list.liveCount === 0) return 0;
    let count = 0;
    if (list.dense) {
      const bits = list.bits!;
      // Two table lookups a word: a quarter less time than popcount's shifts at a million documents.
      for (let word = 0; word < words; word++) {
        const both = bits[word] & matches[word];
        count += HALF_WORD_BITS[both & 0xffff] + HALF_WORD_BITS[both >>> 16];
      }
      return count;
    }
    this.scorer.decodePostings(list);
    for (let index = 0; index < list.count; index++) {
      const document = this.scorer.postingDocuments[index];
      count += (matches[document >>> 5] >>> (document & 31)) & 1;
    }
    return count;
  }

  private rank(query: IndexQuery, statistics?: CorpusStatistics): IndexResult {
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
    const exclusion = this.scorer.exclusionFor(query.filter);
    const field = FIELD_CODES[query.field];
    const sparse = this.scorer.sparse;
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
    for (const term of terms) if (!term.list.dense) this.scorer.scoreWhole(term, field, exclusion);
    let total: number;
    if (dense.length === 0) {
      total = sparse.length;
      this.scorer.offerSparse(best);
    } else if (terms.length === 1) {
      total = this.scorer.scoreOneDenseTerm(dense[0], field, exclusion, best);
    } else {
      this.scorer.indexSparseByBlock();
      total = this.scorer.scoreBlocks(dense, field, exclusion, best);
      this.scorer.clearSparseBlocks();
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
    for (const term of rare) this.scorer.scoreWhole(term, field, exclusion);
    const othersKth = othersBest()[topK - 1] ?? 0;
    const { documents: candidates, scores: sparseScores, length } = this.scorer.sparse;
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
    const touched = this.scorer.touchedBits;
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
      total =
        outsideDense + unionCount(bitmaps, commoner.length > 0 ? touched : null, exclusion, (this.documents + 31) >>> 5, this.scorer.blockUnions);
      if (commoner.length > 0) touched.fill(0);
    }
    return { total, hits: best.hits().map(({ document, score }) => ({ document, rowid: this.rowids[document], score })) };
  }

  /**
   * A zeroed score per candidate (by position in `sparse`) for the `selected` ones, kept from search
   * to search; and their norms into `candidateNorms`, read once for every term looked up.
   */
  private candidateScores(selected: Int32Array): Float64Array {
    if (this.candidateDenseScores.length < this.scorer.sparse.length) {
      this.candidateDenseScores = new Float64Array(Math.min(2 * this.scorer.sparse.length, this.documents));
      this.candidateNorms = new Float64Array(2 * this.candidateDenseScores.length);
    }
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage, candidateNorms: norms } = this;
    const scores = this.candidateDenseScores;
    const candidates = this.scorer.sparse.documents;
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
    const sparseScores = this.scorer.sparse.scores;
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
    const scores = this.scorer.sparse.scores;
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
    const candidates = this.scorer.sparse.documents;
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
    this.scorer.decodePostings(list);
    const { postingDocuments: postings, postingFrequencies: frequencies } = this.scorer;
    const { k1 } = BM25F;
    const { lengths, wideLengths, titleNorms, textNorms, normTitleAverage: titleAverage, normTextAverage: textAverage } = this;
    const touched = this.scorer.touchedBits;
    const { documents: candidates, scores, length } = this.scorer.sparse;
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
}
