import { DocumentLabels, type PackedLabels } from './document-labels.js';
import { type PackedDocuments, packDocuments } from './packed-documents.js';
import type { CorpusStatistics, IndexedDocument, MatchedRows, RankedRows, SearchField, SearchIndex, TermSearch } from './search-index.js';
import { runInSlices } from './segments/in-slices.js';
import { type ReadSegment, readSegment, SegmentError, type SegmentRecord, writeSegment } from './segments/segment-file.js';
import { countStoredTerms } from './term-vector.js';
import { addCounts, type SearchThreads } from './threads/search-threads.js';
import { positionOf, resized } from './typed-arrays.js';

/**
 * A search index split over SearchThreads: each batch of documents added goes whole to the next
 * thread in turn (a bulk load's batches are thousands of documents, so the shares come out even,
 * and a batch moves without a copy). This side keeps what scoring needs from the whole corpus
 * (live documents, total lengths, each term's live documents), and per document its row id,
 * lengths and thread, to take a deleted document's share out again; every search carries those
 * statistics, so a thread scores its documents as an index of every document would. What it costs
 * here: 17 bytes a document and 4 a term, and the documents' doc_ids and titles (see labelOf).
 */
export class ShardedIndex implements SearchIndex {
  readonly threaded = true;
  private readonly id: number;
  private documents = 0;
  private rowids = new Float64Array(0);
  private lengths = new Uint32Array(0);
  private threadOf = new Uint8Array(0);
  private deleted = new Uint32Array(0);
  private deletedCount = 0;
  private live = 0;
  private titleTotal = 0;
  private textTotal = 0;
  private frequencies: Int32Array = new Int32Array(0);
  private nextThread = 0;
  private labels = new DocumentLabels();

  constructor(private readonly threads: SearchThreads) {
    this.id = threads.newIndexId();
  }

  get liveDocuments(): number {
    return this.live;
  }

  get deletedDocuments(): number {
    return this.deletedCount;
  }

  get highestRowid(): number {
    return this.documents === 0 ? 0 : this.rowids[this.documents - 1];
  }

  /** Whether every thread has added every batch sent to it (or one has failed: adding then throws). */
  get idle(): boolean {
    return this.threads.idle;
  }

  /** Adds documents whose row ids are all above every row id added before, with their doc_ids and titles when given. */
  add(batch: IndexedDocument[], labels?: PackedLabels): void {
    if (batch.length > 0) this.addPacked(packDocuments(batch), labels);
  }

  /** As add; the documents' arrays are handed over to a thread, unusable here afterwards. */
  addPacked(packed: PackedDocuments, labels?: PackedLabels): void {
    const count = packed.rowids.length;
    if (count === 0) return;
    this.labels.add(this.documents, labels);
    const thread = this.nextThread;
    this.nextThread = (thread + 1) % this.threads.count;
    this.ensureCapacity(this.documents + count);
    this.rowids.set(packed.rowids, this.documents);
    this.lengths.set(packed.lengths, 2 * this.documents);
    this.threadOf.fill(thread, this.documents, this.documents + count);
    let start = 0;
    for (let position = 0; position < count; position++) {
      this.titleTotal += packed.lengths[2 * position];
      this.textTotal += packed.lengths[2 * position + 1];
      const end = packed.ends[position];
      this.frequencies = countStoredTerms(packed.vectors, start, end, this.frequencies, 1);
      start = end;
    }
    this.documents += count;
    this.live += count;
    this.threads.add(thread, this.id, packed);
  }

  /** Marks the document with this row id deleted; `terms` is its stored term vector. */
  remove(rowid: number, terms: Uint8Array): void {
    const number = positionOf(this.rowids, this.documents, rowid);
    if (number < 0 || ((this.deleted[number >>> 5] >>> (number & 31)) & 1) === 1) return;
    this.deleted[number >>> 5] |= 1 << (number & 31);
    this.deletedCount++;
    this.live--;
    this.titleTotal -= this.lengths[2 * number];
    this.textTotal -= this.lengths[2 * number + 1];
    this.frequencies = countStoredTerms(terms, 0, terms.length, this.frequencies, -1);
    this.threads.send(this.threadOf[number], { kind: 'remove', index: this.id, rowid, terms });
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
    return this.labels.at(positionOf(this.rowids, this.documents, rowid));
  }

  /** Gives back growth slack after a bulk load; the threads then compute their dense terms' bounds ahead. */
  trim(): void {
    this.labels.trim();
    this.rowids = resized(this.rowids, this.documents);
    this.lengths = resized(this.lengths, 2 * this.documents);
    this.threadOf = resized(this.threadOf, this.documents);
    this.deleted = resized(this.deleted, (this.documents + 31) >>> 5);
    const live = Math.max(1, this.live);
    this.threads.sendAll({ kind: 'trim', index: this.id, titleAverage: this.titleTotal / live, textAverage: this.textTotal / live });
  }

  search(query: TermSearch): Promise<RankedRows> {
    if (this.live === 0) return Promise.resolve({ total: 0, hits: [] });
    return this.threads.search(this.id, query, this.statisticsFor(query));
  }

  /** Every thread's matches, merged in row id order (the shares hold different documents). */
  async everyMatch(query: TermSearch): Promise<MatchedRows> {
    const statistics = this.statisticsFor(query);
    const shares = await Promise.all(
      Array.from({ length: this.threads.count }, (_, thread) => this.threads.ask(thread, { kind: 'every', index: this.id, query, statistics })),
    );
    return mergeMatches(shares.map((answer) => answer.matched as MatchedRows));
  }

  /** Each thread's rows asked of it, its answers put back in the rows' order. */
  async termsHeld(rowids: Float64Array, terms: readonly number[], field: SearchField): Promise<Uint8Array> {
    const held = new Uint8Array(rowids.length * terms.length);
    const rowsOf: number[][] = Array.from({ length: this.threads.count }, () => []);
    rowids.forEach((rowid, row) => {
      const number = positionOf(this.rowids, this.documents, rowid);
      if (number >= 0) rowsOf[this.threadOf[number]].push(row);
    });
    await Promise.all(
      rowsOf.map(async (rows, thread) => {
        if (rows.length === 0 || terms.length === 0) return;
        const asked = Float64Array.from(rows, (row) => rowids[row]);
        const answer = await this.threads.ask(thread, { kind: 'held', index: this.id, rowids: asked, terms, field });
        const share = answer.held as Uint8Array;
        rows.forEach((row, position) => {
          held.set(share.subarray(position * terms.length, (position + 1) * terms.length), row * terms.length);
        });
      }),
    );
    return held;
  }

  private statisticsFor(query: TermSearch): CorpusStatistics {
    return {
      liveDocuments: this.live,
      titleTotal: this.titleTotal,
      textTotal: this.textTotal,
      documentFrequencies: query.terms.map((termId) => this.frequencies[termId] ?? 0),
    };
  }

  /** Resolves once the threads have handled everything sent so far (the adds and trim of a load). */
  settled(): Promise<void> {
    return this.threads.sync();
  }

  /** Frees its shares on the threads; the index is not used again. */
  drop(): void {
    if (!this.threads.failed) this.threads.sendAll({ kind: 'drop', index: this.id });
  }

  /**
   * Writes this side's arrays and each thread's share to segment files in `dir` named from
   * `prefix`, all as of now: the threads take their share's picture before any later change.
   */
  async persist(dir: string, prefix: string): Promise<SegmentRecord[]> {
    const { documents } = this;
    const words = (documents + 31) >>> 5;
    const { bytes, ends } = this.labels.contents();
    const [rowids, lengths, threadOf] = [this.rowids, this.lengths, this.threadOf];
    const deleted = this.deleted.slice(0, words);
    const frequencies = this.frequencies.slice();
    const scalars = { documents, live: this.live, deletedCount: this.deletedCount, titleTotal: this.titleTotal, textTotal: this.textTotal };
    const shares = Array.from({ length: this.threads.count }, (_, thread) => {
      const file = `${prefix}-share-${thread}.seg`;
      return this.threads.ask(thread, { kind: 'persist', index: this.id, path: `${dir}/${file}` }).then((answer) => {
        if (!answer.segment) throw new SegmentError(`a search thread could not write its segment: ${answer.error}`);
        return { file, ...answer.segment };
      });
    });
    const file = `${prefix}-main.seg`;
    const main = runInSlices(
      writeSegment(`${dir}/${file}`, scalars, {
        rowids: { type: 'f64', length: documents, pieces: () => [rowids.subarray(0, documents)] },
        lengths: { type: 'u32', length: 2 * documents, pieces: () => [lengths.subarray(0, 2 * documents)] },
        threadOf: { type: 'u8', length: documents, pieces: () => [threadOf.subarray(0, documents)] },
        deleted: { type: 'u32', length: words, pieces: () => [deleted] },
        frequencies: { type: 'i32', length: frequencies.length, pieces: () => [frequencies] },
        labelBytes: { type: 'u8', length: bytes.length, pieces: () => [bytes] },
        labelEnds: { type: 'u32', length: ends.length, pieces: () => [ends] },
      }),
    );
    // Awaited together: a failed write of this side must not leave a share's failure unheard.
    const [written, ...shareRecords] = await Promise.all([main, ...shares]);
    return [{ file, ...written }, ...shareRecords];
  }

  /**
   * A ShardedIndex read back from segments written by persist (this side's first, then one per
   * thread, as many as `threads` has), each checked whole; rejects if any fails its check.
   */
  static async restore(threads: SearchThreads, dir: string, segments: SegmentRecord[]): Promise<ShardedIndex> {
    if (segments.length !== threads.count + 1) throw new SegmentError(`${segments.length - 1} shares were written, for ${threads.count} threads`);
    const index = new ShardedIndex(threads);
    const shares = segments
      .slice(1)
      .map((segment, thread) =>
        threads.ask(thread, { kind: 'restore', index: index.id, path: `${dir}/${segment.file}`, bytes: segment.bytes, crc: segment.crc }),
      );
    let failure: Error | undefined;
    try {
      index.takeSegment(readSegment(`${dir}/${segments[0].file}`, segments[0]));
    } catch (error) {
      failure = error as Error;
    }
    const answers = await Promise.all(shares);
    const refused = answers.find((answer) => answer.error !== undefined);
    failure ??= refused && new SegmentError(`a search thread could not read its segment: ${refused.error}`);
    if (failure) {
      index.drop();
      throw failure;
    }
    return index;
  }

  private takeSegment(segment: ReadSegment): void {
    const { documents, live, deletedCount, titleTotal, textTotal } = segment.scalars;
    Object.assign(this, { documents, live, deletedCount, titleTotal, textTotal });
    this.rowids = segment.array('rowids', 'f64');
    this.lengths = segment.array('lengths', 'u32');
    this.threadOf = segment.array('threadOf', 'u8');
    this.deleted = segment.array('deleted', 'u32');
    this.frequencies = segment.array('frequencies', 'i32');
    this.labels = DocumentLabels.restored(segment.array('labelBytes', 'u8'), segment.array('labelEnds', 'u32'));
    this.nextThread = this.documents === 0 ? 0 : (this.threadOf[this.documents - 1] + 1) % this.threads.count;
  }

  private ensureCapacity(needed: number): void {
    if (needed <= this.rowids.length) return;
    const capacity = Math.ceil(Math.max(needed, this.rowids.length * 1.5, 1024) / 32) * 32;
    this.rowids = resized(this.rowids, capacity);
    this.lengths = resized(this.lengths, 2 * capacity);
    this.threadOf = resized(this.threadOf, capacity);
    this.deleted = resized(this.deleted, capacity >>> 5);
  }
}

/** Shares' matches as one, in row id order, their facet counts added up. */
function mergeMatches(shares: MatchedRows[]): MatchedRows {
  const count = shares.reduce((sum, share) => sum + share.rowids.length, 0);
  const rowids = new Float64Array(count);
  const scores = new Float64Array(count);
  const next = shares.map(() => 0);
  for (let position = 0; position < count; position++) {
    let from = -1;
    shares.forEach((share, index) => {
      if (next[index] < share.rowids.length && (from < 0 || share.rowids[next[index]] < shares[from].rowids[next[from]])) from = index;
    });
    rowids[position] = shares[from].rowids[next[from]];
    scores[position] = shares[from].scores[next[from]++];
  }
  const counted = shares.flatMap((share) => (share.facets ? [share.facets] : []));
  const merged: MatchedRows = counted.length === 0 ? { rowids, scores } : { rowids, scores, facets: counted.reduce(addCounts) };
  if (shares.some((share) => share.unverified)) merged.unverified = true;
  return merged;
}
