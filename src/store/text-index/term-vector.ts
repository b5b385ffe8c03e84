import { forEachTerm } from './analysis.js';

/**
 * A document's terms as stored beside it (the forward index): per distinct term, in ascending
 * term id order, the id's gap to the previous one, its frequency in the title and in the text,
 * each as a LEB128 varint. The search index is built from these, and pseudo-relevance feedback
 * reads them back for the top documents.
 */
export interface AnalysedDocument {
  titleLength: number;
  textLength: number;
  terms: Uint8Array;
}

/** Term ids by term, growing as documents bring new terms; the caller persists `added`. */
export class TermDictionary {
  private readonly ids = new Map<string, number>();
  private nextId = 1;
  readonly added: Array<[number, string]> = [];

  load(rows: Iterable<{ id: number; term: string }>): void {
    for (const { id, term } of rows) {
      this.ids.set(term, id);
      if (id >= this.nextId) this.nextId = id + 1;
    }
  }

  get highestId(): number {
    return this.nextId - 1;
  }

  idOf(term: string): number | undefined {
    return this.ids.get(term);
  }

  idFor(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(term, id);
      this.added.push([id, term]);
    }
    return id;
  }
}

/** Frequencies above this are stored as this: BM25 has long saturated there. */
const MAX_STORED_FREQUENCY = 0xffff;

export class DocumentAnalyser {
  private titleCounts: Uint32Array = new Uint32Array(1024);
  private textCounts: Uint32Array = new Uint32Array(1024);
  private readonly seen: number[] = [];
  private output: Uint8Array = new Uint8Array(4096);

  constructor(private readonly dictionary: TermDictionary) {}

  analyse(title: string, text: string): AnalysedDocument {
    const seen = this.seen;
    seen.length = 0;
    let titleLength = 0;
    let textLength = 0;
    forEachTerm(title, (term) => {
      const id = this.count(term);
      this.titleCounts[id]!++;
      titleLength++;
    });
    forEachTerm(text, (term) => {
      const id = this.count(term);
      this.textCounts[id]!++;
      textLength++;
    });
    seen.sort((a, b) => a - b);
    let length = 0;
    let previous = 0;
    for (const id of seen) {
      if (this.output.length - length < 16) this.output = grow(this.output, this.output.length * 2);
      length = writeVarint(this.output, length, id - previous);
      length = writeVarint(this.output, length, Math.min(this.titleCounts[id]!, MAX_STORED_FREQUENCY));
      length = writeVarint(this.output, length, Math.min(this.textCounts[id]!, MAX_STORED_FREQUENCY));
      this.titleCounts[id] = 0;
      this.textCounts[id] = 0;
      previous = id;
    }
    return { titleLength, textLength, terms: this.output.slice(0, length) };
  }

  private count(term: string): number {
    const id = this.dictionary.idFor(term);
    if (id >= this.titleCounts.length) {
      const size = Math.max(id + 1, this.titleCounts.length * 2);
      this.titleCounts = grow32(this.titleCounts, size);
      this.textCounts = grow32(this.textCounts, size);
    }
    if (this.titleCounts[id] === 0 && this.textCounts[id] === 0) this.seen.push(id);
    return id;
  }
}

function grow(array: Uint8Array, size: number): Uint8Array {
  const grown = new Uint8Array(size);
  grown.set(array);
  return grown;
}

function grow32(array: Uint32Array, size: number): Uint32Array {
  const grown = new Uint32Array(size);
  grown.set(array);
  return grown;
}

export function writeVarint(bytes: Uint8Array, offset: number, value: number): number {
  while (value >= 0x80) {
    bytes[offset++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  bytes[offset++] = value;
  return offset;
}

/** Calls `onTerm(termId, titleFrequency, textFrequency)` for each term of a stored vector. */
export function forEachStoredTerm(terms: Uint8Array, onTerm: (termId: number, title: number, text: number) => void): void {
  let offset = 0;
  let termId = 0;
  const read = (): number => {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = terms[offset++]!;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  while (offset < terms.length) {
    termId += read();
    const title = read();
    onTerm(termId, title, read());
  }
}
