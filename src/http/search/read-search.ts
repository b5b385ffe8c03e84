import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { type Language, languageNamed } from '../../search/analyzer.js';
import type { SortKey } from '../../search/document-index.js';
import { DEFAULT_HIGHLIGHT, type HighlightSettings } from '../../search/highlight.js';
import { findingClauses, readQueryObject } from '../../search/query-dsl.js';
import type { FilterValue, MatchField, SearchMode, SearchRequest } from '../../search/search-request.js';
import type { Step } from '../steps.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A /query's search, parsed once from its validated body (readSearchStep); the later steps and the handler read it. */
    search?: SearchRequest;
  }
}

// Defaults applied here, not by the schema: a body without them stays the body sent, so its
// Idempotency-Key fingerprint is the one it had before these fields existed.
const DEFAULT_FACET_LIMIT = 10;

/** A /query body as its schema (search-body.ts) has validated it. */
interface QueryBody {
  query: string | Record<string, unknown>;
  sort?: string[];
  top_k: number;
  offset?: number;
  facets?: string[];
  facet_limit?: number;
  filters?: Record<string, FilterValue>;
  mode?: SearchMode;
  operator?: 'or' | 'and';
  fields?: string[];
  highlight?: boolean | { fields?: string[]; pre_tag?: string; post_tag?: string; snippet_chars?: number; escape?: boolean };
  typos?: 'auto' | 0 | 1 | 2;
  prefix?: boolean;
  language?: string;
}

/**
 * Reads the validated body into request.search, the one form of the search every later step and
 * the handler use; its words are read in its `language`, else in `corpusLanguage` (SEARCH_LANGUAGE).
 */
export function readSearchStep(corpusLanguage: Language): Step {
  return (request) => {
    request.search = searchRequestOf(request.body as QueryBody, corpusLanguage);
    return undefined;
  };
}

/**
 * The name a /query is priced under when it may be priced apart: its mode (PRICES' "/query:semantic"),
 * else "/query:highlight" for a lexical query asking for highlights; undefined: the endpoint's own.
 */
export function pricedModeOf(request: FastifyRequest): string | undefined {
  const search = request.search;
  if (!search) return undefined;
  if (search.mode !== 'lexical') return `/query:${search.mode}`;
  return search.highlight ? '/query:highlight' : undefined;
}

function searchRequestOf(body: QueryBody, corpusLanguage: Language): SearchRequest {
  const mode = body.mode ?? 'lexical';
  // The schema allows only the codes languageNamed knows.
  const language = body.language === undefined ? undefined : languageNamed(body.language);
  const target = matchTarget(body.query, language ?? corpusLanguage);
  if (mode !== 'lexical' && ('clause' in target || body.sort))
    throw new ApiError(
      'INVALID_QUERY',
      `${'clause' in target ? 'A query object other than match' : 'sort'} works in lexical mode only; "mode" is "${mode}". You were not charged.`,
    );
  return {
    mode,
    ...target,
    ...(body.sort ? { sort: body.sort.map(sortKeyOf) } : {}),
    filters: body.filters ?? {},
    topK: body.top_k,
    offset: body.offset ?? 0,
    ...(body.facets ? { facets: { fields: [...new Set(body.facets)], limit: body.facet_limit ?? DEFAULT_FACET_LIMIT } } : {}),
    ...(body.operator === 'and' ? { operator: 'and' as const } : {}),
    ...(body.fields ? { fields: [...new Set(body.fields)] } : {}),
    ...(body.highlight ? { highlight: highlightOf(body.highlight) } : {}),
    ...(body.typos !== undefined && body.typos !== 'auto' ? { typos: body.typos } : {}),
    ...(body.prefix ? { prefix: true } : {}),
    ...(language ? { language } : {}),
  };
}

function highlightOf(asked: Exclude<QueryBody['highlight'], false | undefined>): HighlightSettings {
  if (asked === true) return DEFAULT_HIGHLIGHT;
  return {
    ...(asked.fields ? { fields: [...new Set(asked.fields)] } : {}),
    preTag: asked.pre_tag ?? DEFAULT_HIGHLIGHT.preTag,
    postTag: asked.post_tag ?? DEFAULT_HIGHLIGHT.postTag,
    snippetChars: asked.snippet_chars ?? DEFAULT_HIGHLIGHT.snippetChars,
    escape: asked.escape ?? DEFAULT_HIGHLIGHT.escape,
  };
}

/**
 * Text, or a match clause of one field's text (the form searched as text has always been), or
 * any other query object as its clause tree, its words kept as text for highlights.
 */
function matchTarget(query: QueryBody['query'], language: Language): Pick<SearchRequest, 'text' | 'field' | 'clause'> {
  if (typeof query === 'string') return { text: query, field: { kind: 'all' } };
  const plain = plainMatch(query);
  if (plain) return plain;
  const read = readQueryObject(query, language);
  if ('error' in read) throw new ApiError('INVALID_QUERY', `${read.error} Nothing was charged.`);
  const words = findingClauses(read.clause).flatMap((found) =>
    found.kind === 'words' ? found.terms : found.kind === 'prefix' ? [`${found.prefix}*`] : found.words.filter((word) => word !== null),
  );
  return { text: words.join(' '), field: { kind: 'all' }, clause: read.clause };
}

function plainMatch(query: Record<string, unknown>): { text: string; field: MatchField } | undefined {
  const keys = Object.keys(query);
  if (keys.length !== 1 || keys[0] !== 'match') return undefined;
  const match = query.match;
  if (typeof match === 'string') return /\S/.test(match) ? { text: match, field: { kind: 'all' } } : undefined;
  if (match === null || typeof match !== 'object' || Object.keys(match).length !== 1) return undefined;
  const [name, value] = Object.entries(match)[0];
  const options = value !== null && typeof value === 'object' ? Object.keys(value) : [];
  const text = typeof value === 'string' ? value : options.length === 1 && options[0] === 'query' ? (value as { query: unknown }).query : undefined;
  if (typeof text !== 'string' || !/\S/.test(text) || name === '') return undefined;
  if (name === 'title' || name === 'text') return { text, field: { kind: name } };
  return { text, field: { kind: 'metadata', name } };
}

/** "year:desc", "title", "_score:asc": a sort key; _score descends unless told, the others ascend. */
function sortKeyOf(spec: string): SortKey {
  const colon = spec.lastIndexOf(':');
  const direction = colon > 0 ? spec.slice(colon + 1) : '';
  const name = direction === 'asc' || direction === 'desc' ? spec.slice(0, colon) : spec;
  const by: SortKey['by'] =
    name === '_score' ? { kind: 'score' } : name === 'title' ? { kind: 'title' } : name === 'doc_id' ? { kind: 'doc_id' } : { kind: 'field', name };
  const descending = direction === 'desc' || (direction === '' && by.kind === 'score');
  return { by, descending };
}
