import type { QueryEmbeddings } from '../embeddings/query-embeddings.js';
import { analyze } from './analyzer.js';
import type { DocumentIndex, FacetCounts, FilterScalar, IndexOrigin, SearchRequest } from './document-index.js';

export type MatchField = SearchRequest['field'];

export interface SearchQuery {
  text: string;
  field: MatchField;
  filters: Record<string, FilterScalar | FilterScalar[]>;
  topK: number;
  /** The rank the page starts at. */
  offset?: number;
  facets?: { fields: string[]; limit: number };
  /** Semantic or hybrid (absent: lexical): the mode and the prompt's vector (see `embeddings`). */
  semantic?: { mode: 'semantic' | 'hybrid'; vector: Float32Array };
}

export type SearchMode = 'lexical' | 'semantic' | 'hybrid';

export interface RankedDocument {
  doc_id: string;
  title: string;
  confidence: number;
}

export interface SearchOutcome {
  total: number;
  documents: RankedDocument[];
  facets?: FacetCounts;
}

/**
 * BM25 score to confidence: s / (s + HALF_CONFIDENCE_SCORE). A fixed mapping, so the same score
 * means the same confidence in every query; monotonic, so confidence never rises down a ranking.
 * A score of 10 (a strong match on a couple of informative terms) maps to 0.5.
 */
export const HALF_CONFIDENCE_SCORE = 10;

export function confidenceOf(score: number): number {
  if (!(score > 0)) return 0;
  return Number((score / (score + HALF_CONFIDENCE_SCORE)).toFixed(6));
}

export class SearchService {
  private loading = false;

  /** `embeddings`: the prompts' vectors for semantic and hybrid queries; without it, only lexical search is offered. */
  constructor(
    private readonly index: DocumentIndex,
    readonly embeddings?: QueryEmbeddings,
  ) {}

  /**
   * Loads the index now: at a million documents this takes seconds when it is built from the
   * documents (under one when read back from disk), during which `ready` is false.
   */
  async prepare(): Promise<IndexOrigin> {
    this.loading = true;
    try {
      return await this.index.prepareSearch();
    } finally {
      this.loading = false;
    }
  }

  /** False while `prepare` runs: a query then would wait for the whole load. */
  get ready(): boolean {
    return !this.loading;
  }

  /** False while the vector index is built after a start: a semantic or hybrid query then would wait for it. */
  get semanticReady(): boolean {
    return this.index.semanticReady?.() ?? true;
  }

  async search(query: SearchQuery): Promise<SearchOutcome> {
    const terms = analyze(query.text);
    const noFacets = query.facets && Object.fromEntries(query.facets.fields.map((field) => [field, {}]));
    if (terms.length === 0 && !query.semantic) return { total: 0, documents: [], ...(noFacets ? { facets: noFacets } : {}) };
    const filters = Object.entries(query.filters).map(([field, value]) => ({
      field,
      anyOf: Array.isArray(value) ? value : [value],
    }));
    const result = await this.index.search({
      terms,
      field: query.field,
      filters,
      topK: query.topK,
      offset: query.offset,
      facets: query.facets,
      ...(query.semantic ? { semantic: query.semantic } : {}),
    });
    const confidence = result.scoresAreConfidences ? (score: number) => Number(Math.max(0, Math.min(1, score)).toFixed(6)) : confidenceOf;
    return {
      total: result.total,
      documents: result.hits.map((hit) => ({ doc_id: hit.docId, title: hit.title, confidence: confidence(hit.score) })),
      ...(result.facets ? { facets: result.facets } : {}),
    };
  }
}
