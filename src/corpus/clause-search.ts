import type { QueryClause, QueryField } from '../search/document-index.js';
import type { SearchIndex, TermSearch } from '../search/engine/search-index.js';
import { phraseMatcher } from '../search/phrase.js';
import type { CorpusFile } from './corpus-file.js';
import { addToUnion, boosted, holdingAtLeast, intersect, NO_ROWS, NO_UNION, type ScoredRows, subtract, unscored } from './scored-rows.js';
import { editsFor, type Spelling, type TermIds } from './term-ids.js';

/**
 * Candidates' texts read and checked per turn of the event loop when phrases are verified: about
 * 5 ms of work, so that other requests are served meanwhile however common the phrase's words.
 */
const PHRASE_ROWS_PER_READ = 100;

type Bool = Extract<QueryClause, { kind: 'bool' }>;

/**
 * Structured queries over a corpus file's index: each clause becomes the set of documents it
 * matches with their scores (the index's every match, set algebra between clauses). Phrases are
 * checked by the index, from its postings' positions.
 */
export class ClauseSearch {
  /** `spelling`: the query's typos, for words clauses that set none, and where corrections are noted. */
  constructor(
    private readonly file: CorpusFile,
    private readonly ids: TermIds,
    private readonly spelling: Spelling,
  ) {}

  async matches(index: SearchIndex, clause: QueryClause): Promise<ScoredRows> {
    switch (clause.kind) {
      case 'words':
        return boosted(await this.forgivingWords(index, clause), clause.boost);
      case 'prefix': {
        const termIds = this.ids.prefixed(clause.field, clause.prefix);
        if (termIds.length === 0) return NO_ROWS;
        return boosted(await index.everyMatch({ terms: termIds, field: clause.field.kind, filters: [], topK: 0 }), clause.boost);
      }
      case 'phrase':
        return boosted(await this.phrase(index, clause.field, clause.words), clause.boost);
      case 'values':
        return this.holding(index, this.ids.values(clause.field, clause.anyOf));
      case 'range':
        return this.holding(index, this.ids.inRange(clause.field, clause.range));
      case 'exists':
        return this.holding(index, this.ids.anyValue(clause.field));
      case 'ids':
        return this.withIds(index, clause.ids);
      case 'every':
        return index.everyMatch(allowed([]));
      case 'max': {
        let united = NO_UNION;
        for (const part of clause.of) united = addToUnion(united, await this.matches(index, part), 'max');
        return united;
      }
      case 'bool':
        return boosted(await this.bool(index, clause), clause.boost);
    }
  }

  /**
   * Lucene's bool: must and filter all hold, must_not none, and at least minimumShould of should;
   * must and should score. Clauses one after another, each combined at once, so that a query of
   * many clauses over a large corpus holds two sets of matches at a time, not one per clause.
   */
  private async bool(index: SearchIndex, clause: Bool): Promise<ScoredRows> {
    let rows: ScoredRows | undefined;
    for (const part of clause.must) {
      const matched = await this.matches(index, part);
      rows = rows ? intersect(rows, matched) : matched;
    }
    for (const part of clause.filter) {
      const matched = unscored(await this.matches(index, part));
      rows = rows ? intersect(rows, matched) : matched;
    }
    if (clause.should.length > 0) {
      let united = NO_UNION;
      for (const part of clause.should) united = addToUnion(united, await this.matches(index, part), 'sum');
      const enough = clause.minimumShould > 0 ? holdingAtLeast(united, clause.minimumShould) : united;
      if (rows && clause.minimumShould > 0) rows = intersect(rows, enough);
      else if (rows) rows = addScores(rows, enough);
      else rows = enough;
    } else if (!rows && clause.minimumShould > 0) return NO_ROWS;
    rows ??= await index.everyMatch(allowed([]));
    for (const part of clause.mustNot) rows = subtract(rows, await this.matches(index, part));
    return rows;
  }

  /**
   * The words, each also matching what lies within its typos' edits (see Typos): with auto, only
   * a word no document holds, scored as the words it matched; with 1 or 2, every word long enough,
   * its own matches raised above the best of its typos' so that they rank first.
   */
  private async forgivingWords(index: SearchIndex, clause: Extract<QueryClause, { kind: 'words' }>): Promise<ScoredRows> {
    const typos = clause.typos ?? this.spelling.typos;
    const exact = this.ids.words(clause.field, clause.terms);
    const forgiven = clause.terms.map((word, position) => {
      const edits = typos === 'auto' && exact[position] !== undefined ? 0 : editsFor(word, typos);
      return this.ids.corrections(clause.field, word, edits);
    });
    if (forgiven.every((corrections) => corrections.length === 0)) return this.words(index, clause.field, clause.terms, clause.operator);
    const perWord: ScoredRows[] = [];
    for (const [position, word] of clause.terms.entries()) {
      const corrections = forgiven[position];
      const own = exact[position] === undefined ? NO_ROWS : await this.words(index, clause.field, [word], 'or');
      if (corrections.length === 0) {
        perWord.push(own);
        continue;
      }
      this.spelling.noteCorrections(
        word,
        corrections.map((correction) => correction.term),
      );
      const near = await index.everyMatch({ terms: corrections.map((correction) => correction.id), field: clause.field.kind, filters: [], topK: 0 });
      perWord.push(addToUnion(addToUnion(NO_UNION, raisedAbove(own, near), 'max'), near, 'max'));
    }
    if (clause.operator === 'and') return perWord.reduce((rows, next) => intersect(rows, next));
    let united = NO_UNION;
    for (const rows of perWord) united = addToUnion(united, rows, 'sum');
    return united;
  }

  /** With `and`, each word's matches in the field intersected: a word in the title does not count for a clause on the text. */
  private async words(index: SearchIndex, field: QueryField, terms: string[], operator: 'or' | 'and'): Promise<ScoredRows> {
    const found = this.ids.words(field, terms);
    if (operator === 'and' && found.includes(undefined)) return NO_ROWS;
    const termIds = [...new Set(found.filter((id) => id !== undefined))];
    if (termIds.length === 0) return NO_ROWS;
    if (operator === 'or' || termIds.length === 1) return index.everyMatch({ terms: termIds, field: field.kind, filters: [], topK: 0 });
    const [first, ...others] = termIds;
    // Candidates hold every word somewhere; each word's matches in the field narrow them.
    const each = await Promise.all(
      termIds.map((termId) => index.everyMatch({ terms: [termId], field: field.kind, filters: [[first], ...others.map((id) => [id])], topK: 0 })),
    );
    return each.reduce((rows, next) => intersect(rows, next));
  }

  /**
   * The documents whose field holds the phrase: checked by the index against its positions, or,
   * where it keeps none for a word (documents stored by an older analyser), against the text.
   */
  private async phrase(index: SearchIndex, field: QueryField, words: Array<string | null>): Promise<ScoredRows> {
    const stems = [...new Set(words.filter((word): word is string => word !== null))];
    if (words.length <= 1 || field.kind === 'metadata') return this.verifiedByText(await this.words(index, field, stems, 'and'), field, words);
    const found = this.ids.words(field, stems);
    if (found.includes(undefined)) return NO_ROWS;
    const termIds = [...new Set(found as number[])];
    const phrase = words.map((word) => (word === null ? 0 : (found[stems.indexOf(word)] as number)));
    const matched = await index.everyMatch({ terms: termIds, field: field.kind, filters: [], topK: 0, phrase });
    return matched.unverified ? this.verifiedByText(matched, field, words) : matched;
  }

  /** Those of the candidates whose field's text holds the phrase, read and checked a hundred at a time. */
  private async verifiedByText(candidates: ScoredRows, field: QueryField, words: Array<string | null>): Promise<ScoredRows> {
    if (words.length <= 1 || candidates.rowids.length === 0) return candidates;
    const keep = new Uint8Array(candidates.rowids.length);
    const holdsPhrase = phraseMatcher(words, this.ids.language);
    for (let start = 0; start < candidates.rowids.length; start += PHRASE_ROWS_PER_READ) {
      const rowids = Array.from(candidates.rowids.subarray(start, start + PHRASE_ROWS_PER_READ));
      const rows = this.file.sql.textsOfRows.all(field.kind === 'metadata' ? 1 : 0, JSON.stringify(rowids)) as Array<{
        id: number;
        title: string;
        text: string;
        metadata: string | null;
      }>;
      const holding = new Set(rows.filter((row) => fieldTexts(row, field).some(holdsPhrase)).map((row) => row.id));
      rowids.forEach((rowid, offset) => {
        if (holding.has(rowid)) keep[start + offset] = 1;
      });
      await new Promise((resolve) => setImmediate(resolve));
    }
    return {
      rowids: candidates.rowids.filter((_, position) => keep[position] === 1),
      scores: candidates.scores.filter((_, position) => keep[position] === 1),
    };
  }

  private holding(index: SearchIndex, valueIds: number[]): Promise<ScoredRows> | ScoredRows {
    if (valueIds.length === 0) return NO_ROWS;
    return index.everyMatch(allowed([valueIds]));
  }

  private async withIds(index: SearchIndex, docIds: string[]): Promise<ScoredRows> {
    const rowids = (this.file.sql.rowsOfDocIds.all(JSON.stringify(docIds)) as number[]).sort((a, b) => a - b);
    if (rowids.length === 0) return NO_ROWS;
    return index.everyMatch({ ...allowed([]), allowedRows: Float64Array.from(rowids) });
  }
}

/** `rows` with the best score of `below` added to each: every one of them ranks above every one of those. */
function raisedAbove(rows: ScoredRows, below: ScoredRows): ScoredRows {
  let best = 0;
  for (const score of below.scores) best = Math.max(best, score);
  return { rowids: rows.rowids, scores: rows.scores.map((score) => score + best) };
}

/** Every document passing the groups of filter terms, scoring 0. */
function allowed(filters: number[][]): TermSearch {
  return { terms: [], field: 'all', filters, topK: 0, matchAll: true };
}

/** `rows` with what `extra` scores added where both hold a row (should clauses beside a must). */
function addScores(rows: ScoredRows, extra: ScoredRows): ScoredRows {
  const scores = rows.scores.slice();
  for (let i = 0, j = 0; i < rows.rowids.length && j < extra.rowids.length; ) {
    if (rows.rowids[i] < extra.rowids[j]) i++;
    else if (rows.rowids[i] > extra.rowids[j]) j++;
    else scores[i++] += extra.scores[j++];
  }
  return { rowids: rows.rowids, scores };
}

/** The texts of a stored row a clause on `field` looks in: title and text apart, one of them, or a metadata field's strings. */
function fieldTexts(row: { title: string; text: string; metadata: string | null }, field: QueryField): string[] {
  if (field.kind === 'all') return [row.title, row.text];
  if (field.kind === 'title') return [row.title];
  if (field.kind === 'text') return [row.text];
  const value = (JSON.parse(row.metadata ?? '{}') as Record<string, unknown>)[field.name];
  return (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string');
}
