import { frequencyByte } from './postings.js';
import type { IndexedDocument } from './search-index.js';
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
  private sortedDocuments = new Int32Array(1 << 16);
  private sortedFrequencies = new Uint8Array(1 << 16);
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
      let termId = 0;
      while (offset < terms.length) {
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
    };
  }

  private push(termId: number, document: number, frequency: number): void {
    if (this.length === this.terms.length) {
      const size = this.length * 2;
      this.terms = resized(this.terms, size);
      this.documents = resized(this.documents, size);
      this.frequencies = resized(this.frequencies, size);
    }
    this.terms[this.length] = termId;
    this.documents[this.length] = document;
    this.frequencies[this.length++] = frequency;
  }

  /** The documents' postings grouped by term, by a counting sort. */
  group(decoded: DecodedDocuments): DecodedBatch {
    const { postingTerms: terms, documents, frequencies, ...batch } = decoded;
    const length = terms.length;
    if (this.sortedDocuments.length < length) {
      this.sortedDocuments = new Int32Array(length);
      this.sortedFrequencies = new Uint8Array(length);
    }
    const { sortedDocuments, sortedFrequencies } = this;
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
    };
  }
}
