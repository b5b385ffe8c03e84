import type { FilterScalar } from './engine/search-index.js';

export type { FilterScalar };

/** Bounds a metadata value must lie within: numbers compare as numbers, strings by code point. */
export interface FilterRange {
  gt?: number | string;
  gte?: number | string;
  lt?: number | string;
  lte?: number | string;
}

/** One field's condition: equal to any of the values, within a range, or equal to none of them. */
export type FieldFilter = { field: string; anyOf: FilterScalar[] } | { field: string; range: FilterRange } | { field: string; not: FilterScalar[] };

/** Which field a clause's words must occur in: title and text together, one of them, or a metadata field. */
export type QueryField = { kind: 'all' } | { kind: 'title' } | { kind: 'text' } | { kind: 'metadata'; name: string };

/**
 * A clause of a structured query (Elasticsearch's query DSL as /query takes it, and query text
 * with phrases), its words analysed. Scoring follows Lucene's: `must` and `should` clauses add
 * up (times their boost), `max` takes its best clause, and filters, values, ranges and `mustNot`
 * do not score.
 */
export type QueryClause =
  /** `typos` when the clause set its own (match's fuzziness), else the query's. */
  | { kind: 'words'; field: QueryField; terms: string[]; operator: 'or' | 'and'; boost: number; typos?: Typos }
  /** Every word of the field that begins with `prefix` (a token, not stemmed), scored as the query of all of them would be. */
  | { kind: 'prefix'; field: QueryField; prefix: string; boost: number }
  /** Stems in order, null where a stopword kept its place. */
  | { kind: 'phrase'; field: QueryField; words: Array<string | null>; boost: number }
  | { kind: 'values'; field: string; anyOf: FilterScalar[] }
  | { kind: 'range'; field: string; range: FilterRange }
  | { kind: 'exists'; field: string }
  | { kind: 'ids'; ids: string[] }
  | { kind: 'every' }
  | { kind: 'max'; of: QueryClause[] }
  | {
      kind: 'bool';
      must: QueryClause[];
      should: QueryClause[];
      mustNot: QueryClause[];
      filter: QueryClause[];
      minimumShould: number;
      boost: number;
    };

/**
 * How a query's words forgive misspelling. auto: a word of 5 to 8 characters that no document
 * holds matches the words one edit from it, of 9 or more two. 1 or 2: every word of at least 4
 * characters also matches the words that many edits from it, ranked below the word itself. 0: none.
 */
export type Typos = 'auto' | 0 | 1 | 2;

/** Per query word that matched through a typo, the words it matched instead. */
export type Corrections = Record<string, string[]>;

/** A sort key: a metadata field, title, doc_id or the score, ascending or descending. */
export interface SortKey {
  by: { kind: 'field'; name: string } | { kind: 'title' } | { kind: 'doc_id' } | { kind: 'score' };
  descending: boolean;
}

/** Where a start's search index came from: read back from disk, or built from the stored documents. */
export type IndexOrigin = 'segments' | 'corpus';

/** SEARCH_LANGUAGE changed since the documents were analysed: those without a language of their own are analysed again. */
export interface LanguageChange {
  from: string;
  to: string;
  documents: number;
}

/**
 * The nearest documents a semantic or hybrid query considers: its semantic matches are those of
 * them that pass the filters. Pages past them are empty.
 */
export const SEMANTIC_DEPTH = 100;

/** A search as the index runs it: its words analysed, its filters as groups. */
export interface IndexQuery {
  /** Analysed query terms (stemming happens in the index). */
  terms: string[];
  /** `or` (the default): a document holding any term matches; `and`: only one holding every term. */
  operator?: 'or' | 'and';
  /** Per query term, the single words it also matches (synonyms), scored as those words. */
  synonyms?: Record<string, string[]>;
  /** Analysed terms whose documents are left out (`-word`). */
  excluded?: string[];
  /** Which field the terms must occur in: title and text together, one of them, or a metadata field. */
  field: QueryField;
  /**
   * Instead of the terms (then empty): what matches and how it scores, as a clause tree; for
   * object forms and for text with phrases or only exclusions.
   */
  clause?: QueryClause;
  /** The order of the matches; absent: by score, ties by doc_id. */
  sort?: SortKey[];
  /**
   * AND across fields; each field matches any of its values (an empty list matches nothing), a
   * range, or none of its values (a document lacking the field passes `not`).
   */
  filters: FieldFilter[];
  topK: number;
  /** The rank the page starts at (0: the best); the page is the `topK` hits from there. */
  offset?: number;
  /** Metadata fields whose values to count over every match, and how many values to keep per field. */
  facets?: { fields: string[]; limit: number };
  /** How the words forgive misspelling (absent: auto). */
  typos?: Typos;
  /** The language the terms are stemmed in (a code languageNamed knows); absent: the corpus's. */
  language?: string;
  /** Lexical (BM25 over the terms; absent: lexical), or semantic or hybrid with the prompt's vector from the embedder. */
  ranking?: { mode: 'lexical' } | { mode: 'semantic' | 'hybrid'; vector: Float32Array };
}

export interface SearchHit {
  docId: string;
  title: string;
  /** Larger is better; unbounded, comparable across queries only through the confidence mapping. */
  score: number;
}

/** Per field, its values' counts over every match: the most common first, ties by value. */
export type FacetCounts = Record<string, Record<string, number>>;

export interface SearchResult {
  total: number;
  hits: SearchHit[];
  /** When facets were asked. */
  facets?: FacetCounts;
  /** Scores already in [0, 1] (similarities, fused ranks), not BM25's. */
  scoresAreConfidences?: boolean;
  /** When a word matched through a typo. */
  corrected?: Corrections;
}

/**
 * The searchable corpus: the SQLite corpus itself, or (PostgreSQL mode) the instance's local
 * replica of it (replica.ts). Either way the ranking is the engine's, exactly.
 */
export interface DocumentIndex {
  search(query: IndexQuery): Promise<SearchResult>;
  /** Loads the search index now (before listening), so the first query does not wait for it; says from where. */
  prepareSearch(): Promise<IndexOrigin>;
  /** False while the vector index is built after a start (a semantic search would wait for it); absent: always ready. */
  semanticReady?(): boolean;
  /** After prepareSearch: whether this start analysed documents again for a changed SEARCH_LANGUAGE. */
  languageChange?(): LanguageChange | undefined;
}
