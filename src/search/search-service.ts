import type { QueryEmbeddings } from '../embeddings/query-embeddings.js';
import { analyze } from './analyzer.js';
import type { DocumentIndex, FacetCounts, IndexOrigin, IndexQuery } from './document-index.js';
import type { SearchRequest } from './search-request.js';

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

  async search(request: SearchRequest): Promise<SearchOutcome> {
    const result = await this.index.search(indexQueryOf(request));
    const confidence = result.scoresAreConfidences ? (score: number) => Number(Math.max(0, Math.min(1, score)).toFixed(6)) : confidenceOf;
    return {
      total: result.total,
      documents: result.hits.map((hit) => ({ doc_id: hit.docId, title: hit.title, confidence: confidence(hit.score) })),
      ...(result.facets ? { facets: result.facets } : {}),
    };
  }
}

/** The request as the index runs it: its words analysed, its filters as groups, its ranking with the prompt's vector. */
function indexQueryOf(request: SearchRequest): IndexQuery {
  const { mode, vector } = request;
  if (mode !== 'lexical' && !vector) throw new Error(`a ${mode} search needs its prompt's vector`);
  return {
    terms: analyze(request.text),
    field: request.field,
    filters: Object.entries(request.filters).map(([field, value]) => ({ field, anyOf: Array.isArray(value) ? value : [value] })),
    topK: request.topK,
    offset: request.offset,
    facets: request.facets,
    ranking: mode === 'lexical' ? { mode } : { mode, vector: vector as Float32Array },
  };
}
