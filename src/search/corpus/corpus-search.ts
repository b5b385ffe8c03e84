import type { DocumentIndex, SearchRequest, SearchResult } from '../document-index.js';
import { stemOf } from '../engine/analysis.js';
import { cutAtTopK } from '../engine/ranking.js';
import type { SearchField } from '../engine/search-index.js';
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

  prepareSearch(): Promise<void> {
    return this.keeper.prepare();
  }

  async search(request: SearchRequest): Promise<SearchResult> {
    const index = this.keeper.current();
    const terms = this.termIds(request);
    if (terms.length === 0) return { total: 0, hits: [] };
    const query = { terms, field: request.field.kind satisfies SearchField, filters: this.filterTermIds(request.filters), topK: request.topK };
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
    return { total: result.total, hits: cutAtTopK(hits, request.topK) };
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
