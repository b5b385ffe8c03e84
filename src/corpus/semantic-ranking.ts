import { HELD_IN_FIELD, type SearchField } from '../search/engine/search-index.js';
import { forEachStoredTerm } from '../search/engine/term-vector.js';
import type { VectorMatch } from '../search/vector-index.js';

/**
 * Reciprocal rank fusion's constant (Cormack et al.; Elasticsearch's and OpenSearch's default): a
 * document's fused score is the sum over the rankings holding it of 1 / (RRF_K + rank).
 */
export const RRF_K = 60;
/** The best fused score possible (first in both rankings): scores are divided by it, into (0, 1]. */
const BEST_FUSED = 2 / (RRF_K + 1);

/** A near document with what its stored term vector says of it. */
export interface SemanticCandidate extends VectorMatch {
  /** Which of the term ids asked about (filter and facet values) it holds. */
  terms: Set<number>;
  /** Whether it holds a query term in the queried field: a lexical match too. */
  matchesLexically: boolean;
}

/**
 * Of the term ids asked about, those the near document at this position of the matches holds,
 * each with HELD, and HELD_IN_FIELD when the queried field holds it; undefined when its row is gone.
 */
export type HeldTermsOf = (position: number) => ReadonlyMap<number, number> | undefined;

/** HeldTermsOf from SearchIndex.termsHeld's answer for the matches' rows and these `terms`. */
export function heldFromIndex(held: Uint8Array, terms: readonly number[]): HeldTermsOf {
  return (position) => {
    const found = new Map<number, number>();
    terms.forEach((termId, term) => {
      const flags = held[position * terms.length + term];
      if (flags !== 0) found.set(termId, flags);
    });
    return found;
  };
}

/** HeldTermsOf from the matches' stored term vectors (row id to vector, null or absent when gone). */
export function heldFromTermVectors(
  matches: readonly VectorMatch[],
  storedTerms: ReadonlyMap<number, Uint8Array | null>,
  terms: readonly number[],
  field: SearchField,
): HeldTermsOf {
  const asked = new Set(terms);
  // A stored vector lists its terms by id: past the highest asked about, nothing is read.
  const lastTermId = Math.max(-1, ...terms);
  return (position) => {
    const vector = storedTerms.get(matches[position].rowid);
    if (!vector) return undefined;
    const found = new Map<number, number>();
    forEachStoredTerm(
      vector,
      (termId, title, text) => {
        if (asked.has(termId)) found.set(termId, 1 | ((field === 'title' ? title > 0 : field === 'text' ? text > 0 : true) ? HELD_IN_FIELD : 0));
      },
      lastTermId,
    );
    return found;
  };
}

/** Every term id semanticCandidates asks about for this query: filter values, exclusions, facet values and the words. */
export function askedTerms(query: { filters: number[][]; excluded: number[]; terms: number[]; counted: number[] }): number[] {
  return [...new Set([...query.filters.flat(), ...query.excluded, ...query.counted, ...query.terms])];
}

/**
 * The near documents that pass the filters (each a group of term ids, one of which the document
 * must hold) and hold no excluded term, in nearness order, with whether each also matches the query's words, and which of
 * `counted` (facet values) it holds. Only the ids asked about are kept: a document holds hundreds.
 */
export function semanticCandidates(
  matches: VectorMatch[],
  heldTerms: HeldTermsOf,
  query: { filters: number[][]; excluded: number[]; every: boolean; terms: number[]; counted: number[] },
): SemanticCandidate[] {
  const { filters } = query;
  const candidates: SemanticCandidate[] = [];
  const wanted = new Set(query.terms);
  const asked = new Set([...filters.flat(), ...query.excluded, ...query.counted]);
  for (const [position, match] of matches.entries()) {
    const found = heldTerms(position);
    if (!found) continue;
    const terms = new Set<number>();
    const held = new Set<number>();
    for (const [termId, flags] of found) {
      if (asked.has(termId)) terms.add(termId);
      if (wanted.has(termId) && (flags & HELD_IN_FIELD) !== 0) held.add(termId);
    }
    // With operator and, a lexical match holds every query word, as the lexical ranking's do.
    const matchesLexically = query.every ? held.size > 0 && held.size === wanted.size : held.size > 0;
    const allowed = filters.every((group) => group.some((termId) => terms.has(termId))) && !query.excluded.some((termId) => terms.has(termId));
    if (allowed) candidates.push({ ...match, terms, matchesLexically });
  }
  return candidates;
}

/** Per facet, how many of the candidates hold each of its value terms, in their order. */
export function countFacets(candidates: readonly SemanticCandidate[], facetTerms: number[][]): number[][] {
  return facetTerms.map((values) =>
    values.map((termId) => candidates.reduce((count, candidate) => count + (candidate.terms.has(termId) ? 1 : 0), 0)),
  );
}

/** Adds one facet count table to another, in place. */
export function addFacetCounts(into: number[][], counts: number[][]): number[][] {
  counts.forEach((values, facet) => {
    values.forEach((count, value) => {
      into[facet][value] = (into[facet]?.[value] ?? 0) + count;
    });
  });
  return into;
}

interface Ranked {
  docId: string;
  title: string;
}

/**
 * Reciprocal rank fusion of a lexical and a semantic ranking, best first (ties by doc_id), scores
 * divided by the best possible so that they lie in (0, 1]. RRF rather than a normalised sum of
 * scores: BM25 scores have no fixed scale, so a sum's weighting would change from query to query.
 */
export function fuseRankings<Hit extends Ranked>(lexical: readonly Hit[], semantic: readonly Hit[]): Array<Ranked & { score: number }> {
  const fused = new Map<string, Ranked & { score: number }>();
  for (const ranking of [lexical, semantic]) {
    ranking.forEach((hit, rank) => {
      const entry = fused.get(hit.docId) ?? { docId: hit.docId, title: hit.title, score: 0 };
      entry.score += 1 / (RRF_K + rank + 1);
      fused.set(hit.docId, entry);
    });
  }
  return [...fused.values()]
    .map((hit) => ({ ...hit, score: hit.score / BEST_FUSED }))
    .sort((a, b) => b.score - a.score || (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0));
}
