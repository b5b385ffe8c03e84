import { resized } from './typed-arrays.js';
/**
 * One term's postings, in increasing document number order, each with a frequency byte: the
 * title frequency (capped at 3) in the top two bits, the text frequency (capped at 63) in the low
 * six. BM25 has saturated long before either cap (at k1 = 1.2, 63 occurrences score 98% of the
 * limit), and one byte keeps a million-document index in a few hundred megabytes.
 *
 * Rare terms keep their postings as one stream of bytes: per posting, a varint of the gap from the
 * previous document number times two, plus one when the frequency byte follows; it is left out
 * when it is USUAL_FREQUENCY. At the benchmark's million documents 96% of the rare terms' postings
 * are once in the text and not in the title, and the stream took 167 MiB where separate gaps and
 * frequency bytes took 258; one array a list rather than two also spares a typed
 * array's own memory, about 300 bytes, for each of the tens of thousands of rare terms.
 *
 * A term in at least one document in DENSE_FRACTION becomes dense: a bitmap over all documents,
 * with the number of postings before each 32-bit word (see `groupRanks`) and a frequency byte per
 * posting, so the postings of any 32-document block are found directly. That is what lets the
 * search score common terms block by block and skip the blocks that cannot reach the top
 * (block-max), and lets totals be counted by OR-ing bitmaps.
 *
 * With DENSE_FRACTION at 1/8, a search with a term in 1/32 to 1/8 of the documents
 * then scored all its postings (the block-max way) or decoded them all (next to a rare term): 10%
 * of the benchmark's 3-word searches took a quarter of their time. As a bitmap such a term is
 * bounded block by block and looked up for candidates like any common term: 1.13x as many 3-word
 * searches a second over HTTP at a million documents, for about 75 MiB more RSS (1/64: over 1 GB).
 */
export const DENSE_FRACTION = 1 / 32;
/** Below this many documents every term stays sparse: bitmaps would only add churn. */
export const DENSE_MINIMUM_DOCUMENTS = 4096;

/** Where a list read range by range (forEachBelow) goes on from: the last document visited, and in a stream, the next posting's byte and number. */
export interface PostingCursor {
  document: number;
  offset: number;
  index: number;
}

export const newCursor = (): PostingCursor => ({ document: -1, offset: 0, index: 0 });

export const MAX_TITLE_FREQUENCY = 3;
export const MAX_TEXT_FREQUENCY = 63;

export function frequencyByte(title: number, text: number): number {
  return (Math.min(title, MAX_TITLE_FREQUENCY) << 6) | Math.min(text, MAX_TEXT_FREQUENCY);
}

/** The frequency byte a rare term's posting leaves out: once in the text, not in the title. */
export const USUAL_FREQUENCY = frequencyByte(0, 1);
/** The most bytes one posting takes in a rare term's stream: a varint of up to 32 bits and a frequency byte. */
const MAX_POSTING_BYTES = 6;

/** Steps of a block's saturation bound (see FieldBounds.saturation): a saturated frequency is below 1. */
export const SATURATION_STEPS = 255;

/** A dense list's block bounds for searches of one field (all, title, text or metadata words). */
export interface FieldBounds {
  /**
   * Per block, an upper bound on the term's saturated frequency in the field, in steps of
   * 1 / SATURATION_STEPS, rounded up: a byte a block rather than a float32, since a common term
   * keeps these for every field it is searched in (after bench:search's queries at a million
   * documents, RSS grew 81 MiB with bytes, 118 MiB with float32).
   */
  saturation: Uint8Array;
  /** The highest of `saturation` (in steps). */
  highest: number;
  /** The documents in `bits` (for one field). */
  documentsInField: number;
  /** The documents holding the term in the field; null for title and text together (all the list's). */
  bits: Uint32Array | null;
  /** How many of the index's documents the bounds cover. */
  documents: number;
  /** The smallest average lengths the bounds were computed with. */
  titleAverage: number;
  textAverage: number;
}

/** A list's positions left in a segment file (see StoredBytes): read whole when wanted. */
export interface StoredPositions {
  readonly length: number;
  read(): Uint8Array;
}

/** A run's positions, posting by posting: `positions[starts[i]..ends[i])`, a start of -1 where a posting has none. */
export interface RunPositions {
  positions: Uint8Array;
  positionStarts: Int32Array;
  positionEnds: Int32Array;
}

export class PostingList {
  /** Postings, deleted documents included. */
  count = 0;
  /** Documents that hold the term and are not deleted. */
  liveCount = 0;
  /** Sparse form: the stream of gaps and frequency bytes (see the head of this file). */
  stream: Uint8Array | null = new Uint8Array(8);
  streamBytes = 0;
  lastDocument = -1;
  /** Dense form: membership bits, and each posting's frequency byte. */
  bits: Uint32Array | null = null;
  frequencies: Uint8Array | null = null;
  /**
   * Dense form: the postings before a word are `groupRanks[word >>> 3] + wordRanks[word]`, those
   * before its group of 8 words plus those before it within the group (at most 7 x 32, a byte). A
   * rank of 4 bytes a word took as much memory as the bitmap itself; this takes 1.5 (see RANK_GROUP_SHIFT).
   */
  groupRanks: Uint32Array | null = null;
  wordRanks: Uint8Array | null = null;
  /** Dense form: block bounds per field searched, by field code (see TextIndex.fieldBounds). */
  fieldBounds: Array<FieldBounds | undefined> = [];
  /**
   * Each posting's positions, in posting order, for phrases: when its frequency byte caps either
   * count, the title's and the text's counts as varints; then its title positions and its text
   * positions, each a varint gap from the one before in the field (see AnalysedDocument). Null
   * once a posting came without them (its document stored by an older analyser): phrases of the
   * term are then checked against the stored text.
   */
  positions: Uint8Array | null = new Uint8Array(8);
  positionBytes = 0;
  /** Instead of `positions` (then null), in a list read back from a segment: they stay in its file until a phrase reads them. */
  storedPositions: StoredPositions | null = null;
  /** Dense form, for phrases: see positionGroupOffsets; for the list as it was at `groupOffsetsCount` postings. */
  private groupOffsets: Uint32Array | null = null;
  private groupOffsetsCount = -1;

  get dense(): boolean {
    return this.bits !== null;
  }

  /** A list read back from a segment: sparse with its stream, or dense with its bitmaps and frequencies. */
  static restored(
    counts: { count: number; liveCount: number; lastDocument: number },
    form: { stream: Uint8Array } | { bits: Uint32Array; groupRanks: Uint32Array; wordRanks: Uint8Array; frequencies: Uint8Array },
    positions: Uint8Array | StoredPositions | null,
  ): PostingList {
    const list = new PostingList();
    list.count = counts.count;
    list.liveCount = counts.liveCount;
    list.lastDocument = counts.lastDocument;
    if (positions instanceof Uint8Array || positions === null) list.positions = positions;
    else {
      list.positions = null;
      list.storedPositions = positions;
    }
    list.positionBytes = positions?.length ?? 0;
    if ('stream' in form) {
      list.stream = form.stream;
      list.streamBytes = form.stream.length;
      return list;
    }
    list.stream = null;
    list.bits = form.bits;
    list.groupRanks = form.groupRanks;
    list.wordRanks = form.wordRanks;
    list.frequencies = form.frequencies;
    return list;
  }

  /**
   * Appends postings `start` to `end` of `documents` (ascending, all above the last one here) with
   * their frequency bytes. A run at a time: the index is loaded term by term, a batch's postings of
   * one term together, and one capacity check per run keeps loading bound by the postings themselves.
   */
  appendRun(documents: Int32Array, frequencies: Uint8Array, start: number, end: number, positions?: RunPositions): void {
    if (this.bits) this.appendDense(documents, frequencies, start, end);
    else this.appendSparse(documents, frequencies, start, end);
    this.appendPositions(start, end, positions);
    this.lastDocument = documents[end - 1];
    this.count += end - start;
    this.liveCount += end - start;
  }

  /** Whether every posting has its positions, in memory or in a segment file. */
  get hasPositions(): boolean {
    return this.positions !== null || this.storedPositions !== null;
  }

  /** The positions (see `positions`), read from the segment file if they are there. The list must have positions. */
  positionsNow(): Uint8Array {
    return this.positions ?? (this.storedPositions as StoredPositions).read();
  }

  private appendPositions(start: number, end: number, run: RunPositions | undefined): void {
    if (!this.hasPositions) return;
    if (run === undefined) {
      this.positions = this.storedPositions = null;
      this.positionBytes = 0;
      return;
    }
    const { positions, positionStarts, positionEnds } = run;
    let needed = this.positionBytes;
    for (let index = start; index < end; index++) {
      if (positionStarts[index] < 0) {
        this.positions = this.storedPositions = null;
        this.positionBytes = 0;
        return;
      }
      needed += positionEnds[index] - positionStarts[index];
    }
    // A list that grows after a start keeps its positions in memory from then on.
    let own = this.positionsNow();
    this.storedPositions = null;
    if (needed > own.length) own = resized(own, Math.max(2 * own.length, needed));
    this.positions = own;
    // A byte loop: a posting's positions are a few bytes, where a view to copy from would cost more.
    let length = this.positionBytes;
    for (let index = start; index < end; index++) {
      const stop = positionEnds[index];
      for (let from = positionStarts[index]; from < stop; from++) own[length++] = positions[from];
    }
    this.positionBytes = length;
  }

  /**
   * Calls `visit(document, frequency, offset)` for every posting, in document order, with where its
   * positions start in `positions`, the list's (positionsNow; read with readPositionCounts).
   */
  forEachWithPositions(positions: Uint8Array, visit: (document: number, frequency: number, offset: number) => void): void {
    const counts = new Int32Array(3);
    let offset = 0;
    const each = (document: number, frequency: number) => {
      visit(document, frequency, offset);
      readPositionCounts(positions, offset, frequency, counts);
      offset = counts[2];
      for (let count = counts[0] + counts[1]; count > 0; count--) while (positions[offset++] & 0x80);
    };
    if (this.bits) this.forEachFrom(0, each);
    else this.forEach(each);
  }

  /**
   * Dense form: per group of `groupRanks`, where its first posting's positions start in
   * `positions` (for a group holding any), so that a phrase reads a posting's positions from its
   * group's rather than from the list's start. Computed on a phrase's first use after a change.
   */
  positionGroupOffsets(positions: Uint8Array): Uint32Array {
    if (this.groupOffsets !== null && this.groupOffsetsCount === this.count) return this.groupOffsets;
    const offsets = new Uint32Array(this.groupRanks!.length);
    let group = -1;
    this.forEachWithPositions(positions, (document, _frequency, offset) => {
      if (document >>> (5 + RANK_GROUP_SHIFT) === group) return;
      group = document >>> (5 + RANK_GROUP_SHIFT);
      offsets[group] = offset;
    });
    this.groupOffsets = offsets;
    this.groupOffsetsCount = this.count;
    return offsets;
  }

  private appendDense(documents: Int32Array, frequencies: Uint8Array, start: number, end: number): void {
    const count = this.count;
    const run = end - start;
    if (count + run > this.frequencies!.length) this.frequencies = resized(this.frequencies!, Math.max(count * 2, count + run));
    const ownFrequencies = this.frequencies!;
    const bits = this.bits!;
    const groupRanks = this.groupRanks!;
    const wordRanks = this.wordRanks!;
    let previous = this.lastDocument;
    for (let index = start; index < end; index++) {
      const document = documents[index];
      const word = document >>> 5;
      const rank = count + index - start;
      ownFrequencies[rank] = frequencies[index];
      if (bits[word] === 0) setRank(groupRanks, wordRanks, word, rank, previous);
      bits[word] |= 1 << (document & 31);
      previous = document;
    }
  }

  private appendSparse(documents: Int32Array, frequencies: Uint8Array, start: number, end: number): void {
    const needed = this.streamBytes + MAX_POSTING_BYTES * (end - start);
    if (needed > this.stream!.length) this.stream = resized(this.stream!, Math.max(this.stream!.length * 2, needed));
    const stream = this.stream!;
    let offset = this.streamBytes;
    let previous = this.lastDocument;
    for (let index = start; index < end; index++) {
      const document = documents[index];
      const frequency = frequencies[index];
      // Below 2^32: document numbers are below 2^31. `>>>` keeps the value unsigned.
      let value = (document - previous) * 2 + (frequency === USUAL_FREQUENCY ? 0 : 1);
      while (value >= 0x80) {
        stream[offset++] = (value & 0x7f) | 0x80;
        value >>>= 7;
      }
      stream[offset++] = value;
      if (frequency !== USUAL_FREQUENCY) stream[offset++] = frequency;
      previous = document;
    }
    this.streamBytes = offset;
  }

  /**
   * Calls `visit(document, frequencyByte)` for the postings from `cursor` on, below document `end`
   * (a multiple of 32), and leaves the cursor at the first posting not visited: a list read range
   * by range, each range across many lists before the next (see TextIndex.everyMatch).
   */
  forEachBelow(cursor: PostingCursor, end: number, visit: (document: number, frequency: number) => void): void {
    if (this.bits) {
      this.forEachFrom(cursor.document + 1, visit, end);
      cursor.document = end - 1;
      return;
    }
    const stream = this.stream!;
    let { offset, document, index } = cursor;
    for (; index < this.count; index++) {
      let at = offset;
      let byte = stream[at++];
      let value = byte & 0x7f;
      // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
      for (let shift = 7; byte & 0x80; shift += 7) value |= ((byte = stream[at++]) & 0x7f) << shift;
      const next = document + (value >>> 1);
      if (next >= end) break;
      document = next;
      const frequency = value & 1 ? stream[at++] : USUAL_FREQUENCY;
      offset = at;
      visit(document, frequency);
    }
    cursor.offset = offset;
    cursor.document = document;
    cursor.index = index;
  }

  /** Calls `visit(document, frequencyByte)` for every posting, in document order. */
  forEach(visit: (document: number, frequency: number) => void): void {
    if (this.bits) {
      this.forEachFrom(0, visit);
      return;
    }
    const stream = this.stream!;
    let offset = 0;
    let document = -1;
    for (let index = 0; index < this.count; index++) {
      let byte = stream[offset++];
      let value = byte & 0x7f;
      // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
      for (let shift = 7; byte & 0x80; shift += 7) value |= ((byte = stream[offset++]) & 0x7f) << shift;
      document += value >>> 1;
      visit(document, value & 1 ? stream[offset++] : USUAL_FREQUENCY);
    }
  }

  /**
   * Calls `visit(position, frequencyByte)` for each of `documents` (ascending) this list holds, by
   * its position there: a bit and a rank each when dense; else one pass over the stream, as far
   * as the last of them. For a few documents (a semantic search's near ones), not a whole list.
   */
  forEachOf(documents: Int32Array, visit: (position: number, frequency: number) => void): void {
    if (documents.length === 0 || documents[0] > this.lastDocument) return;
    if (this.bits) {
      const bits = this.bits;
      documents.forEach((document, position) => {
        const word = document >>> 5;
        const bit = 1 << (document & 31);
        if (document > this.lastDocument || (bits[word] & bit) === 0) return;
        const rank = this.groupRanks![word >>> RANK_GROUP_SHIFT] + this.wordRanks![word] + popcount(bits[word] & (bit - 1));
        visit(position, this.frequencies![rank]);
      });
      return;
    }
    const stream = this.stream!;
    const last = documents[documents.length - 1];
    let offset = 0;
    let document = -1;
    let next = 0;
    for (let index = 0; index < this.count && document < last; index++) {
      let byte = stream[offset++];
      let value = byte & 0x7f;
      // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
      for (let shift = 7; byte & 0x80; shift += 7) value |= ((byte = stream[offset++]) & 0x7f) << shift;
      document += value >>> 1;
      const frequency = value & 1 ? stream[offset++] : USUAL_FREQUENCY;
      while (next < documents.length && documents[next] < document) next++;
      if (next < documents.length && documents[next] === document) visit(next, frequency);
    }
  }

  /**
   * Dense form: calls `visit(document, frequencyByte)` for every posting from document `first` on,
   * up to (not including) document `end` when given, a multiple of 32.
   */
  forEachFrom(first: number, visit: (document: number, frequency: number) => void, end = Infinity): void {
    const bits = this.bits!;
    const groupRanks = this.groupRanks!;
    const wordRanks = this.wordRanks!;
    const frequencies = this.frequencies!;
    const words = Math.min((this.lastDocument >>> 5) + 1, Math.ceil(end / 32));
    for (let word = first >>> 5; word < words; word++) {
      let remaining = bits[word];
      if (remaining === 0) continue;
      let index = groupRanks[word >>> RANK_GROUP_SHIFT] + wordRanks[word];
      if (word === first >>> 5 && (first & 31) !== 0) {
        const below = remaining & ((1 << (first & 31)) - 1);
        index += popcount(below);
        remaining ^= below;
      }
      const base = word << 5;
      while (remaining !== 0) {
        const lowest = remaining & -remaining;
        visit(base + 31 - Math.clz32(lowest), frequencies[index++]);
        remaining ^= lowest;
      }
    }
  }

  /**
   * Sparse form: writes every posting's document number into `documents` and its frequency byte
   * into `frequencies` (each must hold `count`), in order. A tight loop, for scoring a whole list.
   */
  decode(documents: Int32Array, frequencies: Uint8Array): void {
    const stream = this.stream!;
    let offset = 0;
    let document = -1;
    for (let index = 0; index < this.count; index++) {
      let byte = stream[offset++];
      let value = byte & 0x7f;
      // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
      for (let shift = 7; byte & 0x80; shift += 7) value |= ((byte = stream[offset++]) & 0x7f) << shift;
      document += value >>> 1;
      documents[index] = document;
      frequencies[index] = value & 1 ? stream[offset++] : USUAL_FREQUENCY;
    }
  }

  /** Sets the bit of every posting's document in `target`. */
  orInto(target: Uint32Array, words: number): void {
    if (this.bits) {
      const bits = this.bits;
      const limit = Math.min(words, bits.length);
      for (let word = 0; word < limit; word++) target[word] |= bits[word];
      return;
    }
    this.forEach((document) => {
      target[document >>> 5] |= 1 << (document & 31);
    });
  }

  /** Switches to the dense form, with bitmaps sized for `capacity` documents. */
  makeDense(capacity: number): void {
    const bits = new Uint32Array(capacity >>> 5);
    const groupRanks = new Uint32Array(groupsFor(capacity));
    const wordRanks = new Uint8Array(capacity >>> 5);
    const frequencies = new Uint8Array(this.count);
    let index = 0;
    let previous = -1;
    this.forEach((document, frequency) => {
      const word = document >>> 5;
      if (bits[word] === 0) setRank(groupRanks, wordRanks, word, index, previous);
      bits[word] |= 1 << (document & 31);
      frequencies[index++] = frequency;
      previous = document;
    });
    this.bits = bits;
    this.groupRanks = groupRanks;
    this.wordRanks = wordRanks;
    this.frequencies = frequencies;
    this.stream = null;
    this.streamBytes = 0;
  }

  /** Grows the dense form's bitmaps to `capacity` documents. */
  resizeBitmaps(capacity: number): void {
    if (!this.bits) return;
    this.bits = resized(this.bits, capacity >>> 5);
    this.groupRanks = resized(this.groupRanks!, groupsFor(capacity));
    this.wordRanks = resized(this.wordRanks!, capacity >>> 5);
  }

  /** Gives back the growth slack (after a bulk load); returns the bytes copied to do so. */
  trim(): number {
    let copied = 0;
    if (this.positions && this.positions.length !== this.positionBytes) {
      this.positions = resized(this.positions, this.positionBytes);
      copied = this.positionBytes;
    }
    return copied + this.trimPostings();
  }

  private trimPostings(): number {
    if (this.bits) {
      if (this.frequencies!.length === this.count) return 0;
      this.frequencies = resized(this.frequencies!, this.count);
      return this.count;
    }
    if (this.stream!.length === this.streamBytes) return 0;
    this.stream = resized(this.stream!, this.streamBytes);
    return this.streamBytes;
  }
}

/**
 * A posting's title and text position counts, from its frequency byte or, when that caps either,
 * from the varints at `offset` of its list's positions: into `counts` as [title, text, offset of
 * its first position].
 */
export function readPositionCounts(positions: Uint8Array, offset: number, frequency: number, counts: Int32Array): void {
  let title = frequency >>> 6;
  let text = frequency & MAX_TEXT_FREQUENCY;
  if (title === MAX_TITLE_FREQUENCY || text === MAX_TEXT_FREQUENCY) {
    let byte = positions[offset++];
    title = byte & 0x7f;
    // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
    for (let shift = 7; byte & 0x80; shift += 7) title |= ((byte = positions[offset++]) & 0x7f) << shift;
    byte = positions[offset++];
    text = byte & 0x7f;
    // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
    for (let shift = 7; byte & 0x80; shift += 7) text |= ((byte = positions[offset++]) & 0x7f) << shift;
  }
  counts[0] = title;
  counts[1] = text;
  counts[2] = offset;
}

/** Words per group of `PostingList.groupRanks`, as a shift: 8, so a rank within a group fits a byte. */
export const RANK_GROUP_SHIFT = 3;

function groupsFor(capacity: number): number {
  return ((capacity >>> 5) + (1 << RANK_GROUP_SHIFT) - 1) >>> RANK_GROUP_SHIFT;
}

/**
 * Records `rank`, the postings before the first one in `word`, for a list whose previous posting is
 * in document `previous` (-1 for none): the group's rank when this is the group's first posting.
 */
function setRank(groupRanks: Uint32Array, wordRanks: Uint8Array, word: number, rank: number, previous: number): void {
  const group = word >>> RANK_GROUP_SHIFT;
  if (previous < 0 || (previous >>> 5) >>> RANK_GROUP_SHIFT !== group) groupRanks[group] = rank;
  wordRanks[word] = rank - groupRanks[group];
}

export function popcount(value: number): number {
  value -= (value >>> 1) & 0x55555555;
  value = (value & 0x33333333) + ((value >>> 2) & 0x33333333);
  return Math.imul((value + (value >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
