import { frequencyByte, MAX_TEXT_FREQUENCY, MAX_TITLE_FREQUENCY } from './postings.js';
import type { IndexedDocument } from './search-index.js';
import { writeVarint } from './term-vector.js';
import { resized } from './typed-arrays.js';

/** A batch's documents, and their postings in document order as (term, document, frequency). */
export interface DecodedDocuments {
  rowids: Float64Array;
  /** Title and text length of each document, side by side. */
  lengths: Uint32Array;
  titleTotal: number;
  textTotal: number;
  postingTerms: Int32Array;
  documents: Int32Array;
  frequencies: Uint8Array;
  /**
   * Each posting's positions, as its list keeps them (see PostingList.positions), at
   * `positions[positionStarts[i]..positionEnds[i])`; a start of -1 for a document stored without them.
   */
  positions: Uint8Array;
  positionStarts: Int32Array;
  positionEnds: Int32Array;
}

/**
 * A batch as the index takes it in: its postings grouped by term (terms ascending; a term's
 * postings end at its `ends` entry, documents ascending within). Plain typed arrays, so that a batch
 * decoded on another thread can be transferred.
 */
export interface DecodedBatch extends Omit<DecodedDocuments, 'postingTerms'> {
  terms: Int32Array;
  ends: Int32Array;
}

/**
 * Decodes stored term vectors (`decodeDocuments`), and groups a batch's postings by term (`group`),
 * so that each list is then appended from consecutive memory: appending them document by document
 * touched a different list with every posting, and sorting indexes and reading the postings through
 * them cost a cache miss per posting (about 60% of building a million documents' index from their
 * rows). What either returns may view this decoder's buffers, which its next call overwrites.
 */
export class BatchDecoder {
  private terms = new Int32Array(1 << 16);
  private documents = new Int32Array(1 << 16);
  private frequencies = new Uint8Array(1 << 16);
  private positionStarts = new Int32Array(1 << 16);
  private positionEnds = new Int32Array(1 << 16);
  private positions = new Uint8Array(1 << 18);
  private positionBytes = 0;
  private sortedDocuments = new Int32Array(1 << 16);
  private sortedFrequencies = new Uint8Array(1 << 16);
  private sortedPositionStarts = new Int32Array(1 << 16);
  private sortedPositionEnds = new Int32Array(1 << 16);
  private termCounts = new Int32Array(1 << 16);
  private length = 0;

  decode(batch: IndexedDocument[], firstDocument: number): DecodedBatch {
    return this.group(this.decodeDocuments(batch, firstDocument));
  }

  /** The batch's documents numbered from `firstDocument`, their postings as stored (not grouped). */
  decodeDocuments(batch: IndexedDocument[], firstDocument: number): DecodedDocuments {
    const rowids = new Float64Array(batch.length);
    const lengths = new Uint32Array(2 * batch.length);
    let titleTotal = 0;
    let textTotal = 0;
    this.length = 0;
    this.positionBytes = 0;
    batch.forEach((document, position) => {
      const number = firstDocument + position;
      rowids[position] = document.rowid;
      lengths[2 * position] = document.titleLength;
      lengths[2 * position + 1] = document.textLength;
      titleTotal += document.titleLength;
      textTotal += document.textLength;
      // The stored vector's varints decoded inline: this loop is most of loading a large index.
      const terms = document.terms;
      let offset = 0;
      let end = terms.length;
      // Past the terms, their positions (see AnalysedDocument); -1 for a vector without them.
      let positionsAt = -1;
      if (end > 0 && terms[0] === 0) {
        let byte = terms[1];
        let length = byte & 0x7f;
        offset = 2;
        // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
        for (let shift = 7; byte & 0x80; shift += 7) length |= ((byte = terms[offset++]) & 0x7f) << shift;
        end = positionsAt = offset + length;
      }
      let termId = 0;
      while (offset < end) {
        let byte = terms[offset++];
        let gap = byte & 0x7f;
        // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
        for (let shift = 7; byte & 0x80; shift += 7) gap |= ((byte = terms[offset++]) & 0x7f) << shift;
        termId += gap;
        byte = terms[offset++];
        let title = byte & 0x7f;
        // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
        for (let shift = 7; byte & 0x80; shift += 7) title |= ((byte = terms[offset++]) & 0x7f) << shift;
        byte = terms[offset++];
        let text = byte & 0x7f;
        // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
        for (let shift = 7; byte & 0x80; shift += 7) text |= ((byte = terms[offset++]) & 0x7f) << shift;
        this.push(termId, number, frequencyByte(title, text));
        if (positionsAt >= 0) positionsAt = this.copyPositions(terms, positionsAt, title, text);
        else this.positionStarts[this.length - 1] = -1;
      }
    });
    const length = this.length;
    return {
      rowids,
      lengths,
      titleTotal,
      textTotal,
      postingTerms: this.terms.subarray(0, length),
      documents: this.documents.subarray(0, length),
      frequencies: this.frequencies.subarray(0, length),
      positions: this.positions.subarray(0, this.positionBytes),
      positionStarts: this.positionStarts.subarray(0, length),
      positionEnds: this.positionEnds.subarray(0, length),
    };
  }

  /**
   * Copies the last posting's positions from a stored vector at `offset` (`title` and `text` of
   * them) as its list keeps them: with the counts first when its frequency byte caps either.
   * Returns where the vector's next term's positions start.
   */
  private copyPositions(vector: Uint8Array, offset: number, title: number, text: number): number {
    const posting = this.length - 1;
    if (this.positions.length - this.positionBytes < 10 + 5 * (title + text))
      this.positions = resized(this.positions, Math.max(2 * this.positions.length, this.positionBytes + 10 + 5 * (title + text)));
    const positions = this.positions;
    let length = this.positionBytes;
    this.positionStarts[posting] = length;
    if (title >= MAX_TITLE_FREQUENCY || text >= MAX_TEXT_FREQUENCY) {
      length = writeVarint(positions, length, title);
      length = writeVarint(positions, length, text);
    }
    for (let count = title + text; count > 0; count--) {
      let byte: number;
      do {
        byte = vector[offset++];
        positions[length++] = byte;
      } while (byte & 0x80);
    }
    this.positionEnds[posting] = this.positionBytes = length;
    return offset;
  }

  private push(termId: number, document: number, frequency: number): void {
    if (this.length === this.terms.length) {
      const size = this.length * 2;
      this.terms = resized(this.terms, size);
      this.documents = resized(this.documents, size);
      this.frequencies = resized(this.frequencies, size);
      this.positionStarts = resized(this.positionStarts, size);
      this.positionEnds = resized(this.positionEnds, size);
    }
    this.terms[this.length] = termId;
    this.documents[this.length] = document;
    this.frequencies[this.length++] = frequency;
  }

  /** The documents' postings grouped by term, by a counting sort. */
  group(decoded: DecodedDocuments): DecodedBatch {
    const { postingTerms: terms, documents, frequencies, positionStarts, positionEnds, ...batch } = decoded;
    const length = terms.length;
    if (this.sortedDocuments.length < length) {
      this.sortedDocuments = new Int32Array(length);
      this.sortedFrequencies = new Uint8Array(length);
      this.sortedPositionStarts = new Int32Array(length);
      this.sortedPositionEnds = new Int32Array(length);
    }
    const { sortedDocuments, sortedFrequencies, sortedPositionStarts, sortedPositionEnds } = this;
    let counts = this.termCounts;
    const used: number[] = [];
    for (let index = 0; index < length; index++) {
      const termId = terms[index];
      if (termId >= counts.length) counts = this.termCounts = resized(counts, Math.max(termId + 1, counts.length * 2));
      if (counts[termId]++ === 0) used.push(termId);
    }
    used.sort((a, b) => a - b);
    let start = 0;
    for (const termId of used) {
      const count = counts[termId];
      counts[termId] = start;
      start += count;
    }
    for (let index = 0; index < length; index++) {
      const position = counts[terms[index]]++;
      sortedDocuments[position] = documents[index];
      sortedFrequencies[position] = frequencies[index];
      sortedPositionStarts[position] = positionStarts[index];
      sortedPositionEnds[position] = positionEnds[index];
    }
    const ends = new Int32Array(used.length);
    used.forEach((termId, index) => {
      ends[index] = counts[termId];
      counts[termId] = 0;
    });
    return {
      ...batch,
      terms: Int32Array.from(used),
      ends,
      documents: sortedDocuments.subarray(0, length),
      frequencies: sortedFrequencies.subarray(0, length),
      positionStarts: sortedPositionStarts.subarray(0, length),
      positionEnds: sortedPositionEnds.subarray(0, length),
    };
  }
}
