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
}
