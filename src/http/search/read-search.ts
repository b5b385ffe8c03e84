import type { FastifyRequest } from 'fastify';
import { DEFAULT_HIGHLIGHT, type HighlightSettings } from '../../search/highlight.js';
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

type MatchClause = { match: string | Record<string, string | { query: string }> };

/** A /query body as its schema (query.ts) has validated it. */
interface QueryBody {
  query: string | MatchClause;
  top_k: number;
  offset?: number;
  facets?: string[];
  facet_limit?: number;
  filters?: Record<string, FilterValue>;
  mode?: SearchMode;
  operator?: 'or' | 'and';
  fields?: string[];
  highlight?: boolean | { fields?: string[]; pre_tag?: string; post_tag?: string; snippet_chars?: number; escape?: boolean };
}

/** Reads the validated body into request.search, the one form of the search every later step and the handler use. */
export function readSearchStep(): Step {
  return (request) => {
    request.search = searchRequestOf(request.body as QueryBody);
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

function searchRequestOf(body: QueryBody): SearchRequest {
  return {
    mode: body.mode ?? 'lexical',
    ...matchTarget(body.query),
    filters: body.filters ?? {},
    topK: body.top_k,
    offset: body.offset ?? 0,
    ...(body.facets ? { facets: { fields: [...new Set(body.facets)], limit: body.facet_limit ?? DEFAULT_FACET_LIMIT } } : {}),
    ...(body.operator === 'and' ? { operator: 'and' as const } : {}),
    ...(body.fields ? { fields: [...new Set(body.fields)] } : {}),
    ...(body.highlight ? { highlight: highlightOf(body.highlight) } : {}),
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

function matchTarget(query: QueryBody['query']): { text: string; field: MatchField } {
  if (typeof query === 'string') return { text: query, field: { kind: 'all' } };
  if (typeof query.match === 'string') return { text: query.match, field: { kind: 'all' } };
  const [name, value] = Object.entries(query.match)[0];
  const text = typeof value === 'string' ? value : value.query;
  if (name === 'title' || name === 'text') return { text, field: { kind: name } };
  return { text, field: { kind: 'metadata', name } };
}
