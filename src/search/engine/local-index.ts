import type { PackedLabels } from './document-labels.js';
import { FilterBitmaps } from './filter-bitmaps.js';
import type { IndexedDocument, MatchedRows, RankedRows, SearchField, SearchIndex, TermSearch } from './search-index.js';
import { ON_DISK_ARRAYS } from './segments/documents-segment.js';
import { runInSlices } from './segments/in-slices.js';
import { readSegment, SegmentError, type SegmentRecord, writeSegment } from './segments/segment-file.js';
import { TextIndex } from './text-index.js';

/** Filter bitmaps kept for reuse until the index changes. */
const FILTER_CACHE_ENTRIES = 32;

/**
 * A TextIndex in this thread, as a SearchIndex: for a corpus too small for search threads, where
 * messages to them would cost more than they save. Filters become bitmaps here, cached until the
 * index changes.
 */
export class LocalIndex implements SearchIndex {
  readonly threaded = false;
  readonly idle = true;
  private readonly filters = new FilterBitmaps(FILTER_CACHE_ENTRIES);

  constructor(private readonly index = new TextIndex()) {}

  get liveDocuments(): number {
    return this.index.liveDocuments;
  }

  get deletedDocuments(): number {
    return this.index.deletedDocuments;
  }

  get highestRowid(): number {
    return this.index.highestRowid;
  }

  get labelBytes(): number {
    return this.index.labelBytes;
  }

  add(documents: IndexedDocument[], labels?: PackedLabels): void {
    this.index.add(documents, labels);
    this.filters.clear();
  }

  remove(rowid: number, terms: Uint8Array): void {
    this.index.remove(rowid, terms);
    this.filters.clear();
  }

  trim(): void {
    this.index.trim();
  }

  expectLabels(documents: number, bytes: number): void {
    this.index.expectLabels(documents, bytes);
  }

  labelOf(rowid: number): { docId: string; title: string } | undefined {
    return this.index.labelOf(rowid);
  }

  search(query: TermSearch): RankedRows {
    return this.index.search({ ...query, filter: this.filters.forSearch(this.index, query) });
  }

  everyMatch(query: TermSearch): MatchedRows {
    return this.index.everyMatch({ ...query, filter: this.filters.forSearch(this.index, query) });
  }

  termsHeld(rowids: Float64Array, terms: readonly number[], field: SearchField): Uint8Array {
    return this.index.termsHeld(rowids, terms, field);
  }

  /** Writes the index as of now to one segment file in `dir`, a slice per turn of the event loop. */
  async persist(dir: string, prefix: string): Promise<SegmentRecord[]> {
    const file = `${prefix}-local.seg`;
    const { scalars, arrays } = this.index.captureSegment();
    return [{ file, ...(await runInSlices(writeSegment(`${dir}/${file}`, scalars, arrays))) }];
  }

  /** An index read back from the segment persist wrote, checked whole first. */
  static restore(dir: string, segments: SegmentRecord[]): LocalIndex {
    if (segments.length !== 1) throw new SegmentError(`${segments.length} segments were written, for one index`);
    const index = new TextIndex();
    index.restoreSegment(readSegment(`${dir}/${segments[0].file}`, segments[0], ON_DISK_ARRAYS));
    return new LocalIndex(index);
  }

  settled(): Promise<void> {
    return Promise.resolve();
  }

  drop(): void {}
}
