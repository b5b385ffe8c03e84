import { BatchDecoder, type DecodedBatch } from './batch-decoder.js';
import { DocumentLabels, type PackedLabels } from './document-labels.js';
import { DENSE_FRACTION, DENSE_MINIMUM_DOCUMENTS, type FieldBounds, PostingList, SATURATION_STEPS } from './postings.js';
import {
  averageRatio,
  BM25F,
  FIELD_CODES,
  NORM_TABLE_SIZE,
  norm,
  normOf,
  pseudoFrequency,
  TEXT_BITS,
  TEXT_MASK,
  TITLE_BITS,
  textLengthAt,
  titleLengthAt,
  WIDE,
} from './scoring/bm25f.js';
import type { CorpusStatistics, IndexedDocument } from './search-index.js';
import { captureDocuments, restoreDocuments } from './segments/documents-segment.js';
import type { ArraySource, ReadSegment } from './segments/segment-file.js';
import { forEachStoredTerm } from './term-vector.js';
import { positionOf, resized } from './typed-arrays.js';

/**
 * Documents per block of the block-max bounds: one bitmap word, which scoreBlocks relies on
 * (measured: 256 and 64 bound too loosely).
 */
export const BLOCK_SHIFT = 5;

/** What a slice of a trim copies at most, past its first list: a few milliseconds' work. */
const TRIM_SLICE_BYTES = 4 << 20;

/**
 * How loose block bounds may grow, as the averages move, before they are computed anew: 2% more
 * blocks pass the bar at worst, where recomputing costs a pass over a common term's postings.
 */
const MAX_BOUND_SLACK = 1.02;

/**
 * Documents whose postings one step of warmBoundsInSlices walks: a step holds a search thread, and
 * the commonest term's whole list took 60 ms at a million documents; 65,536 documents
 * are a few milliseconds.
 */
const WARM_STEP_DOCUMENTS = 65_536;

/**
 * The documents of a TextIndex and what scoring reads of them: row ids, packed lengths and their
 * BM25F normalisations, deletions, the posting lists with their block bounds, and doc_ids and
 * titles. Adding, removing and trimming happen here; TextIndex adds the searches, with a TermScorer
 * over these arrays.
 */
export abstract class IndexedDocuments {
  documents = 0;
  capacity = 0;
  protected rowids = new Float64Array(0);
  /**
   * Per document, its title's and its text's lengths in one 16-bit word (TITLE_BITS and TEXT_BITS):
   * scoring reads them for every posting, in no useful order, so their bytes decide how many of
   * those reads miss the caches. 16 bits a field made 3-word searches 14% faster than 32 at a
   * million documents on one thread. A document whose title is 31 words or longer,
   * or whose text is 2,047 or longer, is marked WIDE and has both lengths whole in `wideLengths`
   * (2 x number and the next), allocated when the first such document comes.
   */
  lengths = new Uint16Array(0);
  wideLengths: Uint32Array | null = null;
  /**
   * Length normalisations by length, for the lengths below NORM_TABLE_SIZE, against the current
   * averages: a new document or a deletion moves the averages, and recomputing a table is 8,192
   * divisions where a per-document array was two million (8 ms at a million documents, before every
   * search after any change). Lucene caches its BM25 norms by length the same way.
   */
  readonly titleNorms = new Float32Array(NORM_TABLE_SIZE);
  readonly textNorms = new Float32Array(NORM_TABLE_SIZE);
  deleted = new Uint32Array(0);
  deletedCount = 0;
  protected live = 0;
  protected titleTotal = 0;
  protected textTotal = 0;
  normTitleAverage = -1;
  normTextAverage = -1;
  protected lists: Array<PostingList | undefined> = [];
  protected decoder = new BatchDecoder();
  protected labels = new DocumentLabels();

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

  protected *addDecodedInSlices(batch: DecodedBatch, termsPerSlice: number): Generator<void, void, void> {
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
      list.appendRun(batch.documents, batch.frequencies, start, end, batch);
      start = end;
      if ((index + 1) % termsPerSlice === 0) yield;
    }
    if (this.documents >= DENSE_MINIMUM_DOCUMENTS) {
      const threshold = this.documents * DENSE_FRACTION;
      for (const list of this.lists) if (list && !list.dense && list.count >= threshold) list.makeDense(this.capacity);
    }
  }

  /** `lengths`: title and text length of each document from number `first` on, side by side. */
  protected setLengths(lengths: Uint32Array, first: number): void {
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
   * copied them held a search thread for over 100 ms at a million documents.
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
   * them at once (0.6-1.5 s under load at a million documents).
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

  /** What a segment of this index holds, as of now; written later, while the index goes on changing (see captureDocuments). */
  captureSegment(): { scalars: Record<string, number>; arrays: Record<string, ArraySource> } {
    const { documents, live, deletedCount, titleTotal, textTotal, rowids, lengths, wideLengths, deleted, lists, labels } = this;
    return captureDocuments({ documents, live, deletedCount, titleTotal, textTotal, rowids, lengths, wideLengths, deleted, lists, labels });
  }

  /** Takes the documents of a segment (see captureSegment); for an empty index. */
  restoreSegment(segment: ReadSegment): void {
    const state = restoreDocuments(segment);
    Object.assign(this, state);
    this.capacity = state.rowids.length;
    this.resizeWorkingMemory(this.capacity);
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

  /**
   * A dense term's bounds for searches of `field`: per block, an upper bound on its saturated
   * frequency pseudo / (pseudo + k1) there (times its multiplier and boundSlack, an upper bound on
   * its score there); and for one field, the documents holding it in that field. Kept
   * with the list and brought up to date for the documents added since; computed anew only when
   * the averages have moved so far that boundSlack would exceed MAX_BOUND_SLACK. Brought up to
   * date to all its documents, or to those below `upTo` (a multiple of 32) for a step of
   * warmBoundsInSlices.
   */
  fieldBounds(list: PostingList, field: number, upTo = this.documents): FieldBounds {
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
  boundSlack(bounds: FieldBounds): number {
    return Math.max(1, averageRatio(this.normTitleAverage, bounds.titleAverage), averageRatio(this.normTextAverage, bounds.textAverage));
  }

  protected isDeleted(number: number): boolean {
    return ((this.deleted[number >>> 5] >>> (number & 31)) & 1) === 1;
  }

  protected ensureCapacity(needed: number): void {
    if (needed <= this.capacity) return;
    const capacity = Math.ceil(Math.max(needed, this.capacity * 1.5, 1024) / 32) * 32;
    this.rowids = resized(this.rowids, capacity);
    this.lengths = resized(this.lengths, capacity);
    if (this.wideLengths !== null) this.wideLengths = resized(this.wideLengths, 2 * capacity);
    this.deleted = resized(this.deleted, capacity >>> 5);
    this.resizeWorkingMemory(capacity);
    for (const list of this.lists) list?.resizeBitmaps(capacity);
    this.capacity = capacity;
  }

  /** The norm tables, recomputed when the average lengths have moved. */
  protected updateNorms(titleAverage: number, textAverage: number): void {
    if (titleAverage === this.normTitleAverage && textAverage === this.normTextAverage) return;
    this.normTitleAverage = titleAverage;
    this.normTextAverage = textAverage;
    const { b } = BM25F;
    for (let length = 0; length < NORM_TABLE_SIZE; length++) {
      this.titleNorms[length] = norm(length, titleAverage, b);
      this.textNorms[length] = norm(length, textAverage, b);
    }
  }

  /** Sizes the scoring's per-document working memory for `capacity` documents. */
  protected abstract resizeWorkingMemory(capacity: number): void;
}
