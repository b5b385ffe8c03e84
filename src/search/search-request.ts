import type { FilterRange, FilterScalar, IndexQuery, QueryClause, SortKey, Typos } from './document-index.js';
import type { Language } from './engine/languages.js';
import type { HighlightSettings } from './highlight.js';

export type SearchMode = 'lexical' | 'semantic' | 'hybrid';

/** A filter as a body gives it: a value, a list of values, a range, or `{not: value or list}`. */
export type FilterValue = FilterScalar | FilterScalar[] | FilterRange | { not: FilterScalar | FilterScalar[] };

/** Which field a query's words must occur in: title and text together, one of them, or a metadata field. */
export type MatchField = IndexQuery['field'];

/**
 * A search as a caller asked it, parsed and validated once (at the route) and handed whole to the
 * SearchService: the steps before it read its mode, the charge prices it, and the service runs it.
 */
export interface SearchRequest {
  mode: SearchMode;
  /** The query's text: its words, and (semantic, hybrid) the prompt embedded. */
  text: string;
  field: MatchField;
  /** Each field equals the scalar or any of the list, lies within a range, or equals none of `not`; all fields must hold. */
  filters: Record<string, FilterValue>;
  topK: number;
  /** The rank the page starts at. */
  offset: number;
  facets?: { fields: string[]; limit: number };
  /** Semantic and hybrid: the prompt's embedding, set before the charge (see QueryEmbeddings). */
  vector?: Float32Array;
  /** `or` (the default): any word matches; `and`: every word must. */
  operator?: 'or' | 'and';
  /** Metadata fields each hit carries (`["*"]`: all of them). */
  fields?: string[];
  /** Each hit's highlights, made so. */
  highlight?: HighlightSettings;
  /** An object form of the query (lexical only): what matches and how it scores; `text` is then its words, for highlights. */
  clause?: QueryClause;
  /** The order of the matches (lexical only); absent: by score. */
  sort?: SortKey[];
  /** How the words forgive misspelling; absent: auto. */
  typos?: Typos;
  /** The text's last word is a prefix too (search as you type). */
  prefix?: boolean;
  /** The language the words are analysed in; absent: the corpus's (SEARCH_LANGUAGE). */
  language?: Language;
}
