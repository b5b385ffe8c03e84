import { resized } from './typed-arrays.js';

/**
 * Each document's doc_id and title, as UTF-8 end to end, by the order documents were added. A
 * search answers its hits from here: reading each hit's row instead cost about 14 µs a row at a
 * million documents (a 16 KiB page from the file, and a read lock per statement), a third of the
 * event loop's time under a load of 3-word searches. About 75 bytes a document for the
 * benchmark's corpus, one copy in the process whatever the number of search threads.
 */
export class DocumentLabels {
  private bytes = Buffer.alloc(0);
  private used = 0;
  /** Per document, where its doc_id ends and where its title ends (2 x position and the next). */
  private ends = new Uint32Array(0);
  private count = 0;

  /** How many documents have labels: positions 0 to size - 1. */
  get size(): number {
    return this.count;
  }

  /** The bytes of doc_ids and titles held. */
  get bytesUsed(): number {
    return this.used;
  }

  /**
   * Makes room for `documents` documents' labels of `bytes` bytes in all, so that adding them grows
   * nothing and trim has no slack to copy away: for an index rebuilt beside one of the same corpus,
   * whose trim held the event loop 50-64 ms at a million documents copying slack away.
   */
  expect(documents: number, bytes: number): void {
    if (bytes > this.bytes.length) this.growBytes(bytes);
    if (2 * documents > this.ends.length) this.ends = resized(this.ends, 2 * documents);
  }

  /**
   * Adds the labels of documents numbered from `first`, if given. Labels are kept only while every
   * document came with them, so that positions agree with the index's numbers: from a document
   * added without, the index has none, and its hits' rows are read instead.
   */
  add(first: number, labels: PackedLabels | undefined): void {
    if (labels && first === this.count) this.append(labels);
  }

  private append(labels: PackedLabels): void {
    const documents = labels.ends.length / 2;
    this.reserve(documents, labels.bytes.length);
    this.bytes.set(labels.bytes, this.used);
    for (let index = 0; index < labels.ends.length; index++) this.ends[2 * this.count + index] = this.used + labels.ends[index];
    this.used += labels.bytes.length;
    this.count += documents;
  }

  /** The labels of the document at `position`, or undefined beyond those added. */
  at(position: number): { docId: string; title: string } | undefined {
    if (position < 0 || position >= this.count) return undefined;
    const start = position === 0 ? 0 : this.ends[2 * position - 1];
    const docIdEnd = this.ends[2 * position];
    return { docId: this.bytes.toString('utf8', start, docIdEnd), title: this.bytes.toString('utf8', docIdEnd, this.ends[2 * position + 1]) };
  }

  /** What a segment keeps: the bytes used, and each document's two ends. */
  contents(): { bytes: Uint8Array; ends: Uint32Array } {
    return { bytes: this.bytes.subarray(0, this.used), ends: this.ends.subarray(0, 2 * this.count) };
  }

  /** Labels read back from a segment (see contents); the arrays are kept, not copied. */
  static restored(bytes: Uint8Array<ArrayBuffer>, ends: Uint32Array<ArrayBuffer>): DocumentLabels {
    const labels = new DocumentLabels();
    labels.bytes = Buffer.from(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.length);
    labels.used = bytes.length;
    labels.ends = ends;
    labels.count = ends.length / 2;
    return labels;
  }

  /** Gives back growth slack after a bulk load, when there is more than a little. */
  trim(): void {
    if (this.bytes.length - this.used > this.used * LITTLE_SLACK) this.bytes = Buffer.from(this.bytes.subarray(0, this.used));
    if (this.ends.length - 2 * this.count > 2 * this.count * LITTLE_SLACK) this.ends = resized(this.ends, 2 * this.count);
  }

  private reserve(documents: number, bytes: number): void {
    if (this.used + bytes > LABEL_BYTES_LIMIT) throw new RangeError(`an index holds at most ${LABEL_BYTES_LIMIT} bytes of doc_ids and titles`);
    if (this.used + bytes > this.bytes.length) this.growBytes(Math.max(this.used + bytes, Math.ceil(this.bytes.length * 1.5), 1 << 16));
    if (2 * (this.count + documents) > this.ends.length) {
      this.ends = resized(this.ends, Math.max(2 * (this.count + documents), Math.ceil(this.ends.length * 1.5), 2048));
    }
  }

  private growBytes(capacity: number): void {
    const grown = Buffer.allocUnsafe(Math.min(LABEL_BYTES_LIMIT, capacity));
    grown.set(this.bytes.subarray(0, this.used));
    this.bytes = grown;
  }
}

/** Slack that trim leaves, as a share of what is used: copying it away costs more than it gives back. */
const LITTLE_SLACK = 1 / 16;

/** Offsets are 32-bit: 4 GiB of doc_ids and titles, some fifty million documents of the benchmark's corpus. */
const LABEL_BYTES_LIMIT = 2 ** 32 - 1;

/** A batch's labels, packed to move between threads without a copy: UTF-8 end to end, and per document its doc_id's and title's ends. */
export interface PackedLabels {
  bytes: Uint8Array;
  ends: Uint32Array;
}

export function packLabels(rows: ReadonlyArray<{ doc_id: string; title: string }>): PackedLabels {
  let bound = 0;
  for (const row of rows) bound += 3 * (row.doc_id.length + row.title.length);
  const bytes = Buffer.allocUnsafe(bound);
  const ends = new Uint32Array(2 * rows.length);
  let used = 0;
  rows.forEach((row, index) => {
    used += bytes.write(row.doc_id, used);
    ends[2 * index] = used;
    used += bytes.write(row.title, used);
    ends[2 * index + 1] = used;
  });
  // A copy of the part used, in a buffer of its own (allocUnsafe may hand out a slice of a shared pool, which cannot be transferred).
  return { bytes: new Uint8Array(bytes.subarray(0, used)), ends };
}
