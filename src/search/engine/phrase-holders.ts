import { type PostingList, popcount, readPositionCounts } from './postings.js';
import type { SearchField } from './search-index.js';

/** Added to a text position when title and text positions are gathered together: a phrase never spans them. */
const TEXT_POSITIONS = 1 << 30;

/**
 * Clears from `matches` (a bitmap of documents) each one whose field does not hold the phrase:
 * `phrase` is a term id per position, 0 where any word goes (a stopword's place). Each term's
 * positions are gathered for the matches from its list in one pass, then the first term's
 * positions are tried as the phrase's start. False, and nothing cleared, when a term's list keeps
 * no positions: the caller checks the text instead.
 */
export function keepPhraseHolders(
  phrase: readonly number[],
  lists: ReadonlyArray<PostingList | undefined>,
  field: SearchField,
  matches: Uint32Array,
): boolean {
  if (field === 'metadata') return false;
  const distinct = [...new Set(phrase.filter((termId) => termId !== 0))];
  const termLists = distinct.map((termId) => lists[termId]);
  if (termLists.some((list) => list !== undefined && list.positions === null)) return false;
  if (termLists.some((list) => list === undefined)) {
    matches.fill(0);
    return true;
  }
  const candidates = documentsOf(matches);
  if (candidates.length === 0) return true;
  const gathered = termLists.map((list) => gatherPositions(list as PostingList, candidates, field));
  const slots = phrase.map((termId) => (termId === 0 ? -1 : distinct.indexOf(termId)));
  const first = gathered[slots[0]];
  for (let candidate = 0; candidate < candidates.length; candidate++) {
    let held = false;
    for (let at = first.starts[candidate]; at < first.ends[candidate] && !held; at++) {
      const start = first.positions[at];
      held = true;
      for (let slot = 1; slot < slots.length && held; slot++) if (slots[slot] >= 0) held = holds(gathered[slots[slot]], candidate, start + slot);
    }
    if (!held) {
      const document = candidates[candidate];
      matches[document >>> 5] &= ~(1 << (document & 31));
    }
  }
  return true;
}

/** One term's positions in each candidate's field: candidate c's at `positions[starts[c]..ends[c])`, ascending. */
interface GatheredPositions {
  starts: Int32Array;
  ends: Int32Array;
  positions: Int32Array;
}

function gatherPositions(list: PostingList, candidates: Int32Array, field: SearchField): GatheredPositions {
  const bytes = list.positions as Uint8Array;
  const starts = new Int32Array(candidates.length);
  const ends = new Int32Array(candidates.length);
  let positions = new Int32Array(Math.max(64, 2 * candidates.length));
  let length = 0;
  let next = 0;
  const counts = new Int32Array(3);
  const withTitle = field !== 'text';
  const withText = field !== 'title';
  list.forEachWithPositions((document, frequency, offset) => {
    while (next < candidates.length && candidates[next] < document) next++;
    if (next === candidates.length || candidates[next] !== document) return;
    readPositionCounts(bytes, offset, frequency, counts);
    const [title, text] = counts;
    if (positions.length - length < title + text) {
      const grown = new Int32Array(Math.max(2 * positions.length, length + title + text));
      grown.set(positions.subarray(0, length));
      positions = grown;
    }
    starts[next] = length;
    offset = counts[2];
    for (let part = 0; part < 2; part++) {
      const wanted = part === 0 ? withTitle : withText;
      const shift = part === 0 ? 0 : TEXT_POSITIONS;
      let position = 0;
      for (let count = part === 0 ? title : text; count > 0; count--) {
        let byte = bytes[offset++];
        let gap = byte & 0x7f;
        // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
        for (let bit = 7; byte & 0x80; bit += 7) gap |= ((byte = bytes[offset++]) & 0x7f) << bit;
        position += gap;
        if (wanted) positions[length++] = position + shift;
      }
    }
    ends[next] = length;
  });
  return { starts, ends, positions };
}

/** Whether the term is at `position` in the candidate's field (binary search: its positions ascend). */
function holds(gathered: GatheredPositions, candidate: number, position: number): boolean {
  let low = gathered.starts[candidate];
  let high = gathered.ends[candidate] - 1;
  const { positions } = gathered;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    if (positions[middle] === position) return true;
    if (positions[middle] < position) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}

function documentsOf(bitmap: Uint32Array): Int32Array {
  let count = 0;
  for (let word = 0; word < bitmap.length; word++) count += popcount(bitmap[word]);
  const documents = new Int32Array(count);
  let next = 0;
  for (let word = 0; word < bitmap.length; word++) {
    let remaining = bitmap[word];
    while (remaining !== 0) {
      const lowest = remaining & -remaining;
      documents[next++] = (word << 5) + 31 - Math.clz32(lowest);
      remaining ^= lowest;
    }
  }
  return documents;
}
