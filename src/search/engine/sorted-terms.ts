/** A term of the dictionary found by its spelling: its id, the term, and the edits from the word asked (0 for a prefix). */
export interface SpeltTerm {
  id: number;
  term: string;
  edits: number;
}

/** Past this many characters in the terms (other scripts), one edit's spellings are too many to look up one by one. */
const MAX_SPELLING_ALPHABET = 80;

/** Below it, only terms under a field's marker. */
const FIRST_UNMARKED = '\u0020';

/** Terms added since the last sort are looked through one by one, up to this many; then they are merged in. */
const UNSORTED_LIMIT = 512;

/**
 * The dictionary's word terms (title and text stems, and metadata words under their field's
 * marker) in code unit order, for prefixes and typos: a sorted array is a trie whose nodes are
 * runs of terms sharing a prefix, so a prefix is two binary searches and a typo search walks it
 * with one row of edit distances per character, skipping every run whose row has gone past the
 * edits allowed. Terms come in as the dictionary learns them; the array is merged on first use.
 */
export class SortedTerms {
  private terms: string[] = [];
  private ids: number[] = [];
  private unsorted: Array<{ term: string; id: number }> = [];
  /** Every character of the terms: what one edit can put into a word. */
  private readonly alphabet = new Set<string>();

  /** `idOf`: a term's id by its exact spelling, when the caller holds them by spelling (see withinOneEdit). */
  constructor(private readonly idOf?: (term: string) => number | undefined) {}

  add(term: string, id: number): void {
    this.unsorted.push({ term, id });
    // Control characters are fields' marks (metadataWordTerm), never a word's.
    if (this.idOf) for (const character of term) if (character >= FIRST_UNMARKED) this.alphabet.add(character);
  }

  /** The terms that begin with `prefix`, at most `limit` of them (the first in code unit order, then the newest). */
  withPrefix(prefix: string, limit: number): SpeltTerm[] {
    this.settle();
    const found: SpeltTerm[] = [];
    for (let index = this.lowerBound(prefix); index < this.terms.length && found.length < limit; index++) {
      if (!this.terms[index].startsWith(prefix)) break;
      found.push({ id: this.ids[index], term: this.terms[index], edits: 0 });
    }
    for (const entry of this.unsorted) if (found.length < limit && entry.term.startsWith(prefix)) found.push({ ...entry, edits: 0 });
    return found;
  }

  /**
   * The terms within `maxEdits` edits of `word` (Damerau-Levenshtein as optimal string alignment:
   * an insertion, a deletion, a substitution or a swap of neighbours is one edit), `word` itself
   * left out, that begin with `marker` and hold no other marked term's prefix (see
   * metadataWordTerm): fewest edits first.
   */
  within(word: string, maxEdits: number, marker = ''): SpeltTerm[] {
    if (maxEdits === 1 && this.idOf && this.alphabet.size <= MAX_SPELLING_ALPHABET) return this.withinOneEdit(word, marker);
    this.settle();
    const found: SpeltTerm[] = [];
    const rows = new EditRows(word, maxEdits, marker.length);
    let computed = 0;
    let path = '';
    // Marked terms come before every title and text term: marks are control characters.
    let index = this.lowerBound(marker === '' ? FIRST_UNMARKED : marker);
    while (index < this.terms.length) {
      const term = this.terms[index];
      if (!term.startsWith(marker)) break;
      let depth = Math.min(computed, commonPrefix(path, term));
      const deepest = Math.min(term.length, word.length + marker.length + maxEdits);
      let pruned = false;
      while (depth < deepest) {
        depth++;
        if (!rows.compute(depth, term)) {
          pruned = true;
          break;
        }
      }
      path = term;
      computed = pruned ? depth - 1 : depth;
      if (pruned) {
        // No term under this prefix can come within the edits: skip past them all.
        index = this.pastPrefix(index, term, depth);
        continue;
      }
      const edits = depth === term.length ? rows.distance(depth) : maxEdits + 1;
      if (edits <= maxEdits && term.slice(marker.length) !== word) found.push({ id: this.ids[index], term, edits });
      index++;
    }
    for (const entry of this.unsorted) {
      if (!entry.term.startsWith(marker) || (marker === '' && entry.term < FIRST_UNMARKED)) continue;
      const edits = editDistance(word, entry.term.slice(marker.length), maxEdits);
      if (edits > 0 && edits <= maxEdits) found.push({ ...entry, edits });
    }
    return found.sort((a, b) => a.edits - b.edits || (a.term < b.term ? -1 : 1));
  }

  /**
   * Within one edit, the spellings the word can take are few (about 2 x its length x the
   * alphabet): each is looked up by spelling, where walking the terms would read thousands.
   */
  private withinOneEdit(word: string, marker: string): SpeltTerm[] {
    const idOf = this.idOf as (term: string) => number | undefined;
    const characters = [...word];
    const spellings = new Set<string>();
    for (let at = 0; at <= characters.length; at++) {
      const before = characters.slice(0, at).join('');
      const after = characters.slice(at).join('');
      const afterNext = characters.slice(at + 1).join('');
      if (at < characters.length) spellings.add(before + afterNext);
      if (at + 1 < characters.length) spellings.add(before + characters[at + 1] + characters[at] + characters.slice(at + 2).join(''));
      for (const character of this.alphabet) {
        spellings.add(before + character + after);
        if (at < characters.length) spellings.add(before + character + afterNext);
      }
    }
    spellings.delete(word);
    const found: SpeltTerm[] = [];
    for (const spelling of spellings) {
      const id = idOf(marker + spelling);
      if (id !== undefined && spelling !== '') found.push({ id, term: marker + spelling, edits: 1 });
    }
    return found.sort((a, b) => (a.term < b.term ? -1 : 1));
  }

  private settle(): void {
    if (this.unsorted.length === 0 || (this.unsorted.length <= UNSORTED_LIMIT && this.terms.length > 0)) return;
    const added = this.unsorted.sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : 0));
    const terms: string[] = new Array(this.terms.length + added.length);
    const ids: number[] = new Array(terms.length);
    let kept = 0;
    let next = 0;
    for (let index = 0; index < terms.length; index++) {
      const fromAdded = next < added.length && (kept === this.terms.length || added[next].term < this.terms[kept]);
      terms[index] = fromAdded ? added[next].term : this.terms[kept];
      ids[index] = fromAdded ? added[next++].id : this.ids[kept++];
    }
    this.terms = terms;
    this.ids = ids;
    this.unsorted = [];
  }

  /**
   * The first index after `from` whose term does not begin with the first `length` characters of
   * `term` (the term at `from`): galloping, since a run under a pruned prefix is mostly short.
   */
  private pastPrefix(from: number, term: string, length: number): number {
    const terms = this.terms;
    const shares = (index: number) => {
      const other = terms[index];
      if (other.length < length) return false;
      for (let at = length - 1; at >= 0; at--) if (other.charCodeAt(at) !== term.charCodeAt(at)) return false;
      return true;
    };
    let step = 1;
    let low = from;
    while (low + step < terms.length && shares(low + step)) {
      low += step;
      step *= 2;
    }
    let high = Math.min(low + step, terms.length);
    while (low + 1 < high) {
      const middle = (low + high) >>> 1;
      if (shares(middle)) low = middle;
      else high = middle;
    }
    return high;
  }

  /** The first index whose term is not below `term`. */
  private lowerBound(term: string): number {
    let low = 0;
    let high = this.terms.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.terms[middle] < term) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

function commonPrefix(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  let index = 0;
  while (index < length && a.charCodeAt(index) === b.charCodeAt(index)) index++;
  return index;
}

/**
 * Rows of the edit distance table between `word` and a term read character by character: row d
 * holds the distances from the term's first d characters to each prefix of the word. The term's
 * first `skip` characters (its field's marker) must be there as they are and cost nothing.
 */
class EditRows {
  private readonly rows: Int32Array[];
  /** Per row, its least distance. */
  private readonly least: Int32Array;
  private readonly codes: Int32Array;

  constructor(
    word: string,
    private readonly maxEdits: number,
    private readonly skip: number,
  ) {
    const depth = skip + word.length + maxEdits + 1;
    this.codes = Int32Array.from(word, (_, index) => word.charCodeAt(index));
    this.rows = Array.from({ length: depth + 1 }, () => new Int32Array(word.length + 2));
    this.least = new Int32Array(depth + 1);
    for (let column = 0; column <= word.length; column++) this.rows[skip][column] = Math.min(column, maxEdits + 1);
  }

  /**
   * Fills row `depth` from the term's character there; false when no longer term can come within
   * the edits. Only the band of columns within the edits of the diagonal can be: the cells just
   * outside it are set past the edits, so that the next row reads no stale cell.
   */
  compute(depth: number, term: string): boolean {
    if (depth <= this.skip) return true;
    const { codes, maxEdits } = this;
    const beyond = maxEdits + 1;
    const length = codes.length;
    const row = this.rows[depth];
    const above = this.rows[depth - 1];
    const twoAbove = depth - 2 >= this.skip ? this.rows[depth - 2] : null;
    const character = term.charCodeAt(depth - 1);
    const previous = term.charCodeAt(depth - 2);
    const read = depth - this.skip;
    const low = Math.max(1, read - maxEdits);
    const high = Math.min(length, read + maxEdits);
    row[0] = Math.min(read, beyond);
    let least = row[0];
    if (low > 1) row[low - 1] = beyond;
    for (let column = low; column <= high; column++) {
      const substitution = above[column - 1] + (codes[column - 1] === character ? 0 : 1);
      let cost = Math.min(above[column] + 1, row[column - 1] + 1, substitution);
      if (twoAbove && column > 1 && codes[column - 1] === previous && codes[column - 2] === character)
        cost = Math.min(cost, twoAbove[column - 2] + 1);
      row[column] = cost;
      if (cost < least) least = cost;
    }
    if (high < length) row[high + 1] = beyond;
    this.least[depth] = least;
    // A swap reaches back two rows: a row can rise past the edits and the next come back by one.
    const leastAbove = depth - 1 > this.skip ? this.least[depth - 1] : 0;
    return least <= maxEdits || leastAbove < maxEdits;
  }

  distance(depth: number): number {
    const length = this.codes.length;
    return Math.abs(depth - this.skip - length) > this.maxEdits ? this.maxEdits + 1 : this.rows[depth][length];
  }
}

/** The edit distance of two words (as in SortedTerms.within), or more than `maxEdits` once it is sure to be. */
export function editDistance(a: string, b: string, maxEdits: number): number {
  if (Math.abs(a.length - b.length) > maxEdits) return maxEdits + 1;
  const rows = new EditRows(a, maxEdits, 0);
  for (let depth = 1; depth <= b.length; depth++) if (!rows.compute(depth, b)) return maxEdits + 1;
  return rows.distance(b.length);
}
