import {
  type DocumentIndex,
  type FacetCounts,
  type IndexOrigin,
  type IndexQuery,
  SEMANTIC_DEPTH,
  type SearchResult,
} from '../search/document-index.js';
import { languageNamed } from '../search/engine/languages.js';
import { cutAtTopK } from '../search/engine/ranking.js';
import { kthHighest } from '../search/engine/scoring/top-scores.js';
import type { FilterScalar, SearchField, SearchIndex } from '../search/engine/search-index.js';
import { positionOf } from '../search/engine/typed-arrays.js';
import type { VectorMatch } from '../search/vector-index.js';
import { ClauseSearch } from './clause-search.js';
import type { CorpusFile } from './corpus-file.js';
import type { IndexKeeper } from './index-keeper.js';
import { intersect, NO_ROWS, type ScoredRows, unscored } from './scored-rows.js';
import {
  addFacetCounts,
  askedTerms,
  countFacets,
  fuseRankings,
  type HeldTermsOf,
  heldFromIndex,
  heldFromTermVectors,
  semanticCandidates,
} from './semantic-ranking.js';
import { type Label, SortOrder } from './sort-order.js';
import { editsFor, Spelling, TermIds } from './term-ids.js';
import type { VectorKeeper } from './vector-keeper.js';

const NO_GROUPS: number[][] = [];
const NO_IDS: number[] = [];

/**
 * Searches of a corpus file: the request's analysed terms and filter values become the
 * dictionary's term ids, the kept index ranks the documents, and the hits get their doc_ids and
 * titles, ties broken by doc_id.
 */
export class CorpusSearch implements DocumentIndex {
  private readonly ids: TermIds;
  private readonly sortOrder: SortOrder;

  constructor(
    private readonly file: CorpusFile,
    private readonly keeper: IndexKeeper,
    private readonly vectors?: VectorKeeper,
  ) {
    this.ids = new TermIds(() => file.dictionary, file.language);
    this.sortOrder = new SortOrder(file);
  }

  async prepareSearch(): Promise<IndexOrigin> {
    const origin = await this.keeper.prepare();
    await this.vectors?.prepare();
    return origin;
  }

  semanticReady(): boolean {
    return this.vectors?.ready ?? true;
  }

  async search(request: IndexQuery): Promise<SearchResult> {
    const facetValues = request.facets?.fields.map((field) => this.file.dictionary.valuesOf(field));
    const facets: Faceting | undefined = request.facets &&
      facetValues && {
        terms: facetValues.map((values) => values.map((value) => value.id)),
        countsOf: (counts) => topFacets(request.facets as { fields: string[]; limit: number }, facetValues, counts),
      };
    const ranking = request.ranking ?? { mode: 'lexical' };
    const spelling = new Spelling(request.typos);
    const result = await this.searchOf(request, ranking, facets, spelling);
    const corrected = spelling.corrections();
    return corrected ? { ...result, corrected } : result;
  }

  private searchOf(request: IndexQuery, ranking: NonNullable<IndexQuery['ranking']>, facets: Faceting | undefined, spelling: Spelling) {
    switch (ranking.mode) {
      case 'lexical':
        return this.lexicalSearch(request, facets, spelling);
      case 'semantic':
        return this.semanticSearch(request, ranking.vector, facets, spelling);
      case 'hybrid':
        return this.hybridSearch(request, ranking.vector, facets, spelling);
    }
  }

  /** A page from `offset` is cut from the best offset + topK, ties by doc_id: pages never overlap. */
  private async lexicalSearch(request: IndexQuery, facets: Faceting | undefined, spelling: Spelling): Promise<SearchResult> {
    const offset = request.offset ?? 0;
    const lexical = await this.lexicalRanking(request, offset + request.topK, facets?.terms, spelling);
    return withFacets({ total: lexical.total, hits: lexical.hits.slice(offset) }, facets?.countsOf(lexical.facets));
  }

  /** The best `depth` lexical hits (cut there, ties by doc_id), every match counted and, when asked, faceted. */
  private async lexicalRanking(
    request: IndexQuery,
    depth: number,
    facetTerms: number[][] | undefined,
    spelling: Spelling,
  ): Promise<{
    total: number;
    hits: Array<{ docId: string; title: string; score: number }>;
    facets?: number[][];
    /** For a structured query: whether a row is among its matches (hybrid tells its near documents apart by it). */
    holds?: (rowid: number) => boolean;
  }> {
    if (request.clause || request.sort) return this.structuredRanking(request, depth, facetTerms, spelling);
    const index = this.keeper.current();
    const { terms, required } = this.wordIds(request, spelling);
    if (terms.length === 0 || required === undefined) return { total: 0, hits: [] };
    const filters = this.filterTermIds(request.filters);
    const excluded = this.excludedIds(request);
    const query = {
      terms,
      field: request.field.kind satisfies SearchField,
      filters: required.length > 0 ? [...filters, ...required] : filters,
      ...(excluded.length > 0 ? { excluded } : {}),
      topK: depth,
      ...(facetTerms ? { facets: facetTerms } : {}),
    };
    // An index level with the file answers from the doc_ids and titles it holds. A row can be gone
    // while this connection's own transaction holds the index back, or while a new index is built
    // in the background and the old one serves: then each hit's row is read, and a hit without one
    // dropped.
    const level = this.keeper.level;
    const result = await this.keeper.search(index, query);
    const hits: Array<{ docId: string; title: string; score: number }> = [];
    for (const hit of result.hits) {
      const label = (level && index.labelOf(hit.rowid)) || this.readLabel(hit.rowid);
      if (label) hits.push({ docId: label.docId, title: label.title, score: hit.score });
    }
    return { total: result.total, hits: cutAtTopK(hits, depth), ...(result.facets ? { facets: result.facets } : {}) };
  }

  /**
   * A ranking from every match (see ClauseSearch): of the request's clause, or of its words when
   * only a sort is asked; then the top-level filters; ordered by the sort or by score.
   */
  private async structuredRanking(request: IndexQuery, depth: number, facetTerms: number[][] | undefined, spelling: Spelling) {
    const index = this.keeper.current();
    const level = this.keeper.level;
    const filters = this.filterTermIds(request.filters);
    const excluded = this.excludedIds(request);
    let matches: ScoredRows;
    if (request.clause) {
      matches = await new ClauseSearch(this.file, this.idsOf(request), spelling).matches(index, request.clause);
      if (filters.length > 0 || excluded.length > 0)
        matches = intersect(matches, unscored(await index.everyMatch({ terms: [], field: 'all', filters, excluded, topK: 0, matchAll: true })));
    } else {
      // Words and a sort: the filters go with the words, as for a ranking.
      const { terms, required } = this.wordIds(request, spelling);
      matches =
        terms.length === 0 || required === undefined
          ? NO_ROWS
          : await index.everyMatch({ terms, field: request.field.kind, filters: [...filters, ...required], excluded, topK: 0 });
    }
    const labelOf = (rowid: number) => (level && index.labelOf(rowid)) || this.readLabel(rowid);
    const hits = request.sort ? this.sortOrder.order(matches, request.sort, depth, labelOf) : bestByScore(matches, depth, labelOf);
    const facets = facetTerms && (await this.facetsOver(index, matches, facetTerms));
    const holds = (rowid: number) => positionOf(matches.rowids, matches.rowids.length, rowid) >= 0;
    return { total: matches.rowids.length, hits, holds, ...(facets ? { facets } : {}) };
  }

  private async facetsOver(index: SearchIndex, matches: ScoredRows, facetTerms: number[][]): Promise<number[][] | undefined> {
    const counted = await index.everyMatch({
      terms: [],
      field: 'all',
      filters: [],
      topK: 0,
      matchAll: true,
      allowedRows: matches.rowids,
      facets: facetTerms,
    });
    return counted.facets;
  }

  /** The nearest documents passing the filters, by similarity. */
  private async semanticSearch(request: IndexQuery, vector: Float32Array, facets: Faceting | undefined, spelling: Spelling): Promise<SearchResult> {
    const offset = request.offset ?? 0;
    const { candidates, near } = await this.nearCandidates(request, vector, facets, false, spelling);
    const hits = near.slice(offset, offset + request.topK).map((hit) => ({ ...hit, score: Math.min(1, hit.score) }));
    const counts = facets && countFacets(candidates, facets.terms);
    return { ...withFacets({ total: near.length, hits }, facets?.countsOf(counts)), scoresAreConfidences: true };
  }

  /** The near documents fused with the lexical ranking (see fuseRankings): its matches are the lexical ones and the near ones together. */
  private async hybridSearch(request: IndexQuery, vector: Float32Array, facets: Faceting | undefined, spelling: Spelling): Promise<SearchResult> {
    const offset = request.offset ?? 0;
    // The lexical ranking first: on search threads it runs while this thread searches the graph.
    const [lexical, { candidates, near }] = await Promise.all([
      this.lexicalRanking(request, Math.max(SEMANTIC_DEPTH, offset + request.topK), facets?.terms, spelling),
      this.nearCandidates(request, vector, facets, true, spelling),
    ]);
    const nearOnly = candidates.filter((candidate) => !(lexical.holds?.(candidate.rowid) ?? candidate.matchesLexically));
    const counts = facets && addFacetCounts(lexical.facets ?? facets.terms.map((values) => values.map(() => 0)), countFacets(nearOnly, facets.terms));
    const hits = fuseRankings(lexical.hits, near).slice(offset, offset + request.topK);
    return { ...withFacets({ total: lexical.total + nearOnly.length, hits }, facets?.countsOf(counts)), scoresAreConfidences: true };
  }

  /**
   * The SEMANTIC_DEPTH nearest documents that pass the filters, with their doc_ids and titles; the
   * page's by exact similarity, the rest of the depth by the graph's. Term vectors are read only
   * when something needs them: filters, facets, or (`lexicalToo`) telling which match lexically.
   */
  private async nearCandidates(request: IndexQuery, vector: Float32Array, facets: Faceting | undefined, lexicalToo: boolean, spelling: Spelling) {
    const offset = request.offset ?? 0;
    const matches = this.vectors ? await this.vectors.nearest(vector, SEMANTIC_DEPTH, offset + request.topK) : [];
    const filters = this.filterTermIds(request.filters);
    const words = this.wordIds(request, spelling);
    const index = this.keeper.current();
    const level = this.keeper.level;
    const query = {
      filters,
      excluded: this.excludedIds(request),
      every: request.operator === 'and',
      // With operator and, a word no document holds leaves no lexical match.
      terms: words.required === undefined ? [] : words.terms,
      counted: facets?.terms.flat() ?? [],
    };
    const candidates =
      filters.length > 0 || facets !== undefined || lexicalToo || query.excluded.length > 0
        ? semanticCandidates(matches, await this.heldTerms(index, level, matches, askedTerms(query), request.field.kind), query)
        : matches.map((match) => ({ ...match, terms: new Set<number>(), matchesLexically: false }));
    const near = candidates.flatMap((candidate) => {
      const label = (level && index.labelOf(candidate.rowid)) || this.readLabel(candidate.rowid);
      return label ? [{ ...label, score: candidate.similarity }] : [];
    });
    return { candidates, near };
  }

  /**
   * The query's words as term ids: each word's own, or (typos auto) its corrections when no
   * document holds it; and with `operator: and`, a group per word that a document must hold
   * (undefined when a word matches nothing).
   */
  private wordIds(request: IndexQuery, spelling: Spelling): { terms: number[]; required: number[][] | undefined } {
    const termIds = this.idsOf(request);
    const ids = termIds.words(request.field, request.terms);
    const groups = request.terms.map((word, position): number[] => {
      const id = ids[position];
      const alternatives = request.synonyms?.[word];
      if (alternatives) {
        const found = termIds.words(request.field, alternatives).filter((each) => each !== undefined);
        return id === undefined ? found : [id, ...found];
      }
      if (id !== undefined) return [id];
      // Typos of 1 or 2 rank a word's own matches first: the clause path does that (ClauseSearch).
      const corrections = spelling.typos === 'auto' ? termIds.corrections(request.field, word, editsFor(word, 'auto')) : [];
      if (corrections.length > 0)
        spelling.noteCorrections(
          word,
          corrections.map((correction) => correction.term),
        );
      return corrections.map((correction) => correction.id);
    });
    const terms = [...new Set(groups.flat())];
    if (request.operator !== 'and') return { terms, required: NO_GROUPS };
    return { terms, required: groups.some((group) => group.length === 0) ? undefined : groups };
  }

  /** Term ids of the request's words, stemmed in its language. */
  private idsOf(request: IndexQuery): TermIds {
    return request.language === undefined ? this.ids : this.ids.in(languageNamed(request.language) ?? this.file.language);
  }

  /** The term ids whose documents are left out: the excluded words' in the queried field, and the values of `not` filters. */
  private excludedIds(request: IndexQuery): number[] {
    const nots = request.filters.flatMap((filter) => ('not' in filter ? this.ids.values(filter.field, filter.not) : []));
    if (!request.excluded?.length && nots.length === 0) return NO_IDS;
    return [
      ...new Set([
        ...this.idsOf(request)
          .words(request.field, request.excluded ?? [])
          .filter((id) => id !== undefined),
        ...nots,
      ]),
    ];
  }

  /**
   * Filters as groups of term ids (see TermSearch.filters): a field's values asked for, or those of
   * its values within the range; a value no document holds has none. `not` filters leave documents
   * out instead (excludedIds).
   */
  private filterTermIds(filters: IndexQuery['filters']): number[][] {
    const groups: number[][] = [];
    for (const filter of filters) {
      if ('anyOf' in filter) groups.push(this.ids.values(filter.field, filter.anyOf));
      else if ('range' in filter) groups.push(this.ids.inRange(filter.field, filter.range));
    }
    return groups;
  }

  /**
   * Which of `terms` the near documents hold: from the index's postings when it is level with the
   * file (a bit or a short scan per term, where decoding 100 stored term vectors took 1.9 ms at
   * 100,000 documents), else from the rows' stored term vectors, which a row not yet indexed has.
   */
  private async heldTerms(index: SearchIndex, level: boolean, matches: VectorMatch[], terms: number[], field: SearchField): Promise<HeldTermsOf> {
    if (!level) return heldFromTermVectors(matches, this.storedTerms(matches), terms, field);
    return heldFromIndex(
      await index.termsHeld(
        Float64Array.from(matches, (match) => match.rowid),
        terms,
        field,
      ),
      terms,
    );
  }

  private storedTerms(matches: ReadonlyArray<{ rowid: number }>): Map<number, Uint8Array | null> {
    const rows = this.file.sql.termsOfRows.all(JSON.stringify(matches.map((match) => match.rowid))) as Array<{
      id: number;
      terms: Uint8Array | null;
    }>;
    return new Map(rows.map((row) => [row.id, row.terms]));
  }

  private readLabel(rowid: number): { docId: string; title: string } | undefined {
    const row = this.file.sql.hit.get(rowid) as { doc_id: string; title: string } | undefined;
    return row && { docId: row.doc_id, title: row.title };
  }
}

/** The best `depth` matches by score, ties by doc_id. */
function bestByScore(matches: ScoredRows, depth: number, labelOf: (rowid: number) => Label | undefined): Array<Label & { score: number }> {
  const { rowids, scores } = matches;
  const bar = rowids.length > depth ? kthHighest(scores, scores.length, depth) : -Infinity;
  const hits: Array<Label & { score: number }> = [];
  for (let index = 0; index < rowids.length; index++) {
    if (scores[index] < bar) continue;
    const label = labelOf(rowids[index]);
    if (label) hits.push({ ...label, score: scores[index] });
  }
  return cutAtTopK(hits, depth);
}

/** Facets asked: the term ids of each field's values, and the answer's counts made of what was counted per value. */
interface Faceting {
  terms: number[][];
  countsOf(counts: number[][] | undefined): FacetCounts;
}

function withFacets(result: SearchResult, facets: FacetCounts | undefined): SearchResult {
  return facets ? { ...result, facets } : result;
}

/**
 * Each field's values with their counts (none counted: all zero), the `limit` most common, ties by
 * value as text; values no match holds are left out.
 */
function topFacets(
  request: { fields: string[]; limit: number },
  values: ReadonlyArray<ReadonlyArray<{ value: FilterScalar }>>,
  counts: number[][] | undefined,
): FacetCounts {
  const facets: FacetCounts = {};
  request.fields.forEach((field, position) => {
    // Values the same as text (5 and "5") are one key of the answer's object: their counts add up.
    const byKey = new Map<string, number>();
    (values[position] ?? []).forEach((entry, index) => {
      const count = counts?.[position]?.[index] ?? 0;
      if (count > 0) byKey.set(String(entry.value), (byKey.get(String(entry.value)) ?? 0) + count);
    });
    const counted = Array.from(byKey, ([key, count]) => ({ key, count }))
      .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, request.limit);
    facets[field] = Object.fromEntries(counted.map((entry) => [entry.key, entry.count]));
  });
  return facets;
}
