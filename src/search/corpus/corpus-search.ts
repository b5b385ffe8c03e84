import type { DocumentIndex, FacetCounts, IndexOrigin, SearchRequest, SearchResult } from '../document-index.js';
import { stemOf } from '../engine/analysis.js';
import { cutAtTopK } from '../engine/ranking.js';
import type { FilterScalar, SearchField } from '../engine/search-index.js';
import { filterTerm, metadataWordTerm } from '../engine/term-vector.js';
import type { CorpusFile } from './corpus-file.js';
import type { IndexKeeper } from './index-keeper.js';

/**
 * Searches of a corpus file: the request's analysed terms and filter values become the
 * dictionary's term ids, the kept index ranks the documents, and the hits get their doc_ids and
 * titles, ties broken by doc_id.
 */
export class CorpusSearch implements DocumentIndex {
  constructor(
    private readonly file: CorpusFile,
    private readonly keeper: IndexKeeper,
  ) {}

  prepareSearch(): Promise<IndexOrigin> {
    return this.keeper.prepare();
  }

  async search(request: SearchRequest): Promise<SearchResult> {
    const index = this.keeper.current();
    const terms = this.termIds(request);
    const facetValues = request.facets?.fields.map((field) => this.file.dictionary.valuesOf(field));
    const facetsOf = (counts: number[][] | undefined) => request.facets && facetValues && topFacets(request.facets, facetValues, counts);
    if (terms.length === 0) return withFacets({ total: 0, hits: [] }, facetsOf(undefined));
    // A page from `offset` is cut from the best offset + topK, ties by doc_id: pages never overlap.
    const offset = request.offset ?? 0;
    const query = {
      terms,
      field: request.field.kind satisfies SearchField,
      filters: this.filterTermIds(request.filters),
      topK: offset + request.topK,
      ...(facetValues ? { facets: facetValues.map((values) => values.map((value) => value.id)) } : {}),
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
    return withFacets({ total: result.total, hits: cutAtTopK(hits, offset + request.topK).slice(offset) }, facetsOf(result.facets));
  }

  private termIds(request: SearchRequest): number[] {
    const { field } = request;
    const ids = new Set<number>();
    for (const term of request.terms) {
      const stem = stemOf(term);
      const id = this.file.dictionary.idOf(field.kind === 'metadata' ? metadataWordTerm(field.name, stem) : stem);
      if (id !== undefined) ids.add(id);
    }
    return [...ids];
  }

  /** Filters as groups of term ids (see TermSearch.filters); a value no document holds has none. */
  private filterTermIds(filters: SearchRequest['filters']): number[][] {
    return filters.map((filter) => filter.anyOf.flatMap((value) => this.file.dictionary.idOf(filterTerm(filter.field, value)) ?? []));
  }

  private readLabel(rowid: number): { docId: string; title: string } | undefined {
    const row = this.file.sql.hit.get(rowid) as { doc_id: string; title: string } | undefined;
    return row && { docId: row.doc_id, title: row.title };
  }
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
