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

export type FieldKind = 'all' | 'title' | 'text' | 'metadata';

/**
 * The near documents that pass the filters (each a group of term ids, one of which the document
 * must hold) and hold no excluded term, in nearness order, with whether each also matches the query's words, and which of
 * `counted` (facet values) it holds. Only the ids asked about are kept: a document holds hundreds.
 */
export function semanticCandidates(
  matches: VectorMatch[],
  storedTerms: ReadonlyMap<number, Uint8Array | null>,
  query: { filters: number[][]; excluded: number[]; every: boolean; terms: number[]; field: FieldKind; counted: number[] },
): SemanticCandidate[] {
  const { filters, field } = query;
  const candidates: SemanticCandidate[] = [];
  const wanted = new Set(query.terms);
  const asked = new Set([...filters.flat(), ...query.excluded, ...query.counted]);
  // A stored vector lists its terms by id: past the highest asked about, nothing is read.
  let lastTermId = -1;
  for (const termId of [...asked, ...wanted]) lastTermId = Math.max(lastTermId, termId);
  for (const match of matches) {
    const vector = storedTerms.get(match.rowid);
    if (!vector) continue;
    const terms = new Set<number>();
    const held = new Set<number>();
    forEachStoredTerm(
      vector,
      (termId, title, text) => {
        if (asked.has(termId)) terms.add(termId);
        if (wanted.has(termId) && (field === 'title' ? title > 0 : field === 'text' ? text > 0 : true)) held.add(termId);
      },
      lastTermId,
    );
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
