import type { DocumentStore, MetadataValue } from '../documents/document-store.js';
import type { QueryEmbeddings } from '../embeddings/query-embeddings.js';
import { analyze } from './analyzer.js';
import type { Corrections, DocumentIndex, FacetCounts, FieldFilter, IndexOrigin, IndexQuery, LanguageChange } from './document-index.js';
import { ENGLISH, type Language } from './engine/languages.js';
import { documentLanguage } from './engine/term-vector.js';
import { highlightsOf, highlightTerms } from './highlight.js';
import { findingClauses, textClause } from './query-dsl.js';
import { parseQueryText, withLastWordPrefix } from './query-text.js';
import type { FilterValue, SearchRequest } from './search-request.js';
import type { SynonymSource, SynonymTable } from './synonyms.js';

export interface RankedDocument {
  doc_id: string;
  title: string;
  confidence: number;
  /** When fields were asked: the named metadata fields the document has. */
  fields?: Record<string, MetadataValue>;
  /** When highlights were asked: per field, its text with the matched words tagged. */
  highlights?: Record<string, string>;
}

export interface SearchOutcome {
  total: number;
  documents: RankedDocument[];
  facets?: FacetCounts;
  /** When a word matched through a typo: what it matched. */
  corrected?: Corrections;
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

  /**
   * `documents`: where hits' fields and highlights are read from. `embeddings`: the prompts' vectors
   * for semantic and hybrid queries; without it, only lexical search is offered.
   */
  constructor(
    private readonly index: DocumentIndex,
    private readonly documents: Pick<DocumentStore, 'getDocument'>,
    readonly embeddings?: QueryEmbeddings,
    private readonly synonyms?: SynonymSource,
    readonly language: Language = ENGLISH,
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

  /** After prepare: whether this start analysed documents again for a changed SEARCH_LANGUAGE. */
  languageChange(): LanguageChange | undefined {
    return this.index.languageChange?.();
  }

  /** False while the vector index is built after a start: a semantic or hybrid query then would wait for it. */
  get semanticReady(): boolean {
    return this.index.semanticReady?.() ?? true;
  }

  async search(asked: SearchRequest): Promise<SearchOutcome> {
    const request = asked.prefix && asked.mode !== 'semantic' ? { ...asked, text: withLastWordPrefix(asked.text) } : asked;
    const synonyms = request.mode === 'semantic' ? undefined : this.synonyms?.current();
    const language = request.language ?? this.language;
    const result = await this.index.search(indexQueryOf(request, synonyms, language));
    const confidence = result.scoresAreConfidences ? (score: number) => Number(Math.max(0, Math.min(1, score)).toFixed(6)) : confidenceOf;
    const documents = result.hits.map((hit) => ({ doc_id: hit.docId, title: hit.title, confidence: confidence(hit.score) }));
    return {
      total: result.total,
      documents: request.fields || request.highlight ? await this.withStored(request, documents, result.corrected, synonyms, language) : documents,
      ...(result.facets ? { facets: result.facets } : {}),
      ...(result.corrected ? { corrected: result.corrected } : {}),
    };
  }

  /**
   * The hits with what was asked of their stored documents: fields and highlights. A semantic
   * query has no words to mark: its snippets are the texts' beginnings.
   */
  private async withStored(
    request: SearchRequest,
    documents: RankedDocument[],
    corrected: Corrections | undefined,
    synonyms: SynonymTable | undefined,
    language: Language,
  ): Promise<RankedDocument[]> {
    const asked = request.clause ?? textClause(request.text, request.field, 'or', language);
    const finding = request.mode === 'semantic' || !request.highlight ? [] : findingClauses(synonyms ? synonyms.expand(asked) : asked);
    const terms = highlightTerms(
      finding.flatMap((clause) => (clause.kind === 'words' ? clause.terms : [])),
      finding.flatMap((clause) => (clause.kind === 'phrase' ? [clause.words] : [])),
      {
        prefixes: finding.flatMap((clause) => (clause.kind === 'prefix' ? [clause.prefix] : [])),
        stems: Object.values(corrected ?? {}).flat(),
      },
      language,
    );
    const stored = await Promise.all(documents.map((document) => this.documents.getDocument(document.doc_id)));
    return documents.map((document, position) => {
      const found = stored[position];
      if (!found) return document;
      return {
        ...document,
        ...(request.fields ? { fields: pickFields(found.metadata, request.fields) } : {}),
        ...(request.highlight ? { highlights: highlightsOf(found, terms, request.highlight, documentLanguage(found.metadata, this.language)) } : {}),
      };
    });
  }
}

/**
 * The request as the index runs it: its words analysed, its filters as groups, its ranking with
 * the prompt's vector, its words' synonyms: single words beside the words, or (phrases among
 * them) the clause with each member matching its alternatives (SynonymTable.expand).
 */
function indexQueryOf(request: SearchRequest, synonyms: SynonymTable | undefined, language: Language): IndexQuery {
  const { mode, vector } = request;
  if (mode !== 'lexical' && !vector) throw new Error(`a ${mode} search needs its prompt's vector`);
  const { wanted, excluded, phrases, excludedPhrases, prefixes } = parseQueryText(request.text);
  const terms = analyze(wanted, language);
  // Phrases, prefixes, typos ranked below their word, and text of exclusions alone need the clause
  // path; other text is searched as words, as ever. A prefix's expansions are many (hundreds for 3
  // characters): every match scored once is far faster than a best-k search over that many terms.
  const needsClauses =
    phrases.length > 0 ||
    excludedPhrases.length > 0 ||
    prefixes.length > 0 ||
    request.typos === 1 ||
    request.typos === 2 ||
    (terms.length === 0 && excluded) ||
    andWithinOneField(request);
  const alternatives = synonyms && !synonyms.empty && !request.clause && !needsClauses ? synonyms.wordAlternatives(terms) : {};
  const written =
    request.clause ??
    (mode !== 'semantic' && (needsClauses || alternatives === undefined)
      ? textClause(request.text, request.field, request.operator ?? 'or', language)
      : undefined);
  const clause = written && synonyms ? synonyms.expand(written) : written;
  return {
    terms,
    ...(alternatives && Object.keys(alternatives).length > 0 && !clause ? { synonyms: alternatives } : {}),
    ...(excluded && !clause ? { excluded: analyze(excluded, language) } : {}),
    ...(clause ? { clause } : {}),
    ...(request.sort ? { sort: request.sort } : {}),
    ...(request.operator === 'and' ? { operator: 'and' as const } : {}),
    field: request.field,
    filters: Object.entries(request.filters).map(([field, value]) => fieldFilterOf(field, value)),
    topK: request.topK,
    offset: request.offset,
    facets: request.facets,
    ...(request.typos !== undefined ? { typos: request.typos } : {}),
    language: language.code,
    ranking: mode === 'lexical' ? { mode } : { mode, vector: vector as Float32Array },
  };
}

/** `and` in the title or the text alone: each word must be in that field, which the clause path checks. */
function andWithinOneField(request: SearchRequest): boolean {
  return request.operator === 'and' && (request.field.kind === 'title' || request.field.kind === 'text');
}

/** The named metadata fields the document has; `*`: all of them. */
function pickFields(metadata: Record<string, MetadataValue>, names: string[]): Record<string, MetadataValue> {
  if (names.includes('*')) return metadata;
  return Object.fromEntries(names.filter((name) => Object.hasOwn(metadata, name)).map((name) => [name, metadata[name] as MetadataValue]));
}

function fieldFilterOf(field: string, value: FilterValue): FieldFilter {
  if (Array.isArray(value)) return { field, anyOf: value };
  if (value === null || typeof value !== 'object') return { field, anyOf: [value] };
  if ('not' in value) return { field, not: Array.isArray(value.not) ? value.not : [value.not] };
  return { field, range: value };
}
