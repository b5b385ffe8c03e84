import type { PackedLabels } from './document-labels.js';
import type { SegmentRecord } from './segments/segment-file.js';

/** A metadata value as the engine analyses it (any JSON value): its scalars become filter terms, its strings' words field terms. */
export type AnalysableValue = string | number | boolean | null | AnalysableValue[] | { [field: string]: AnalysableValue };

/** A value a filter compares with, by strict equality. */
export type FilterScalar = string | number | boolean | null;

/** A document as the engine analyses it. */
export interface AnalysableDocument {
  title: string;
  text: string;
  metadata: Record<string, AnalysableValue>;
}

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
  /** Per facet, its values' term ids: each is counted over every match (see IndexResult.facets). */
  facets?: number[][];
  /** Every document the filter allows matches, whether it holds a term or not (see TermSearch.matchAll). */
  matchAll?: boolean;
  /** For everyMatch: only documents whose field holds this phrase match (see TermSearch.phrase). */
  phrase?: number[];
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
  /** When facets were asked: per facet, how many matches hold each of its value terms, in their order. */
  facets?: number[][];
}

/** A search as an index takes it: term ids, the field, and filters as groups of term ids. */
export interface TermSearch {
  terms: number[];
  field: SearchField;
  /** Groups of term ids: a document is allowed when it holds a term of every group. */
  filters: number[][];
  /** Term ids whose documents are left out, whatever else they hold. */
  excluded?: number[];
  topK: number;
  /** Per facet, its values' term ids, to count over every match. */
  facets?: number[][];
  /** Row ids, ascending: the matches are only documents among them. */
  allowedRows?: Float64Array;
  /** For everyMatch: every document passing the filters matches, the terms only scoring it (0 when it holds none). */
  matchAll?: boolean;
  /**
   * For everyMatch: a phrase, a term id per position (0 where any word goes), which the field of
   * every match holds, checked against the postings' positions. Title, text or both; not metadata.
   */
  phrase?: number[];
}

/** Every match of a search, ascending by row id, with its score; and facets, when asked, counted over them. */
export interface MatchedRows {
  rowids: Float64Array;
  scores: Float64Array;
  facets?: number[][];
  /** Set when the search had a phrase the index could not check (a term's list keeps no positions): the matches may not hold it. */
  unverified?: boolean;
}

/** In SearchIndex.termsHeld's answer: the row's document holds the term; and holds it in the field asked about. */
export const HELD = 1;
export const HELD_IN_FIELD = 2;

/** The matches' count and the best hits by row id, with every hit tied with the last (see ranking.ts). */
export interface RankedRows {
  total: number;
  hits: Array<{ rowid: number; score: number }>;
  /** When facets were asked: per facet, how many matches hold each of its value terms. */
  facets?: number[][];
}

/**
 * An index of the corpus, as the corpus keeps it: a TextIndex in this thread (LocalIndex) or one
 * split over search threads (ShardedIndex). Documents are added in row id order.
 */
export interface SearchIndex {
  readonly liveDocuments: number;
  /** Deleted documents whose postings the index still holds (skipped by every search). */
  readonly deletedDocuments: number;
  readonly highestRowid: number;
  /** The bytes of doc_ids and titles this index holds, for an index built to replace it. */
  readonly labelBytes: number;
  /** On search threads: documents handed over are added there in turn, so a rebuild hands over small steps. */
  readonly threaded: boolean;
  /** Whether every document handed over has been added (always, in this thread). */
  readonly idle: boolean;
  /** Adds documents whose row ids are all above every row id added before, with their doc_ids and titles when given. */
  add(documents: IndexedDocument[], labels?: PackedLabels): void;
  /** Marks the document with this row id deleted; `terms` is its stored term vector. */
  remove(rowid: number, terms: Uint8Array): void;
  /** Gives back growth slack after a bulk load. */
  trim(): void;
  /** Makes room for the doc_ids and titles of `documents` documents, `bytes` in all. */
  expectLabels(documents: number, bytes: number): void;
  labelOf(rowid: number): { docId: string; title: string } | undefined;
  search(query: TermSearch): RankedRows | Promise<RankedRows>;
  /** Every match of the search, not only the best (for sorts and structured queries); `topK` is not read. */
  everyMatch(query: TermSearch): MatchedRows | Promise<MatchedRows>;
  /**
   * Which of `terms` the live documents of `rowids` hold, read from the postings: per row, in their
   * order, a byte per term of HELD, with HELD_IN_FIELD when `field` (title or text) holds it too.
   * For a few rows (a semantic search's near documents); a row not in the index holds none.
   */
  termsHeld(rowids: Float64Array, terms: readonly number[], field: SearchField): Uint8Array | Promise<Uint8Array>;
  /**
   * Writes the index as it is now to segment files in `dir`, named from `prefix`, synced to disk;
   * resolves with them. Changes meanwhile are not in them.
   */
  persist(dir: string, prefix: string): Promise<SegmentRecord[]>;
  /** Resolves once everything handed over has been added and what the loading freed given back. */
  settled(): Promise<void>;
  /** Frees what it holds; it is not used again. */
  drop(): void;
}
