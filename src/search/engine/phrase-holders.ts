import { type PostingList, popcount, RANK_GROUP_SHIFT, readPositionCounts } from './postings.js';
import type { SearchField } from './search-index.js';

/** Added to a text position when title and text positions are gathered together: a phrase never spans them. */
const TEXT_POSITIONS = 1 << 30;

/** The documents holding a phrase, ascending, and per distinct term of it (in `termIds` order) their frequency bytes. */
export interface PhraseHolders {
  termIds: number[];
  documents: Int32Array;
  frequencies: Uint8Array[];
}

/**
 * The documents whose field holds the phrase, none excluded: `phrase` is a term id per position,
 * 0 where any word goes (a stopword's place). The candidates are the documents holding every term,
 * found from the rarest list; each term's positions are then read for them alone, and the first
 * term's positions tried as the phrase's start. Undefined when a term's list keeps no positions:
 * the caller checks the text instead.
 */
export function phraseHolders(
  phrase: readonly number[],
  lists: ReadonlyArray<PostingList | undefined>,
  field: SearchField,
  exclusion: Uint32Array | null,
): PhraseHolders | undefined {
  if (field === 'metadata') return undefined;
  const termIds = [...new Set(phrase.filter((termId) => termId !== 0))];
  const termLists = termIds.map((termId) => lists[termId]);
  if (termLists.some((list) => list !== undefined && !list.hasPositions)) return undefined;
  if (termLists.some((list) => list === undefined || list.liveCount === 0))
    return { termIds, documents: new Int32Array(0), frequencies: termIds.map(() => new Uint8Array(0)) };
  const candidates = holdingEvery(termLists as PostingList[], exclusion);
  const positions = (termLists as PostingList[]).map((list) => (candidates.length > 0 ? list.positionsNow() : new Uint8Array(0)));
  const found = (termLists as PostingList[]).map((list, index) => postingsOf(list, positions[index], candidates));
  const slots: number[] = [];
  const slotTerms: number[] = [];
  phrase.forEach((termId, slot) => {
    if (termId === 0) return;
    slots.push(slot);
    slotTerms.push(termIds.indexOf(termId));
  });
  const starts = new PhraseStarts(slots, field);
  const kept: number[] = [];
  for (let candidate = 0; candidate < candidates.length; candidate++) {
    for (let index = 0; index < slots.length; index++) {
      const term = found[slotTerms[index]];
      starts.set(index, positions[slotTerms[index]], term.offsets[candidate], term.frequencies[candidate]);
    }
    if (starts.meet()) kept.push(candidate);
  }
  return {
    termIds,
    documents: Int32Array.from(kept, (candidate) => candidates[candidate]),
    frequencies: found.map((term) => Uint8Array.from(kept, (candidate) => term.frequencies[candidate])),
  };
}

/** The documents in every list and not excluded, ascending: the rarest list's, each looked up in the others. */
function holdingEvery(lists: PostingList[], exclusion: Uint32Array | null): Int32Array {
  const [rarest, ...others] = [...lists].sort((a, b) => a.count - b.count);
  let found: number[] = [];
  const keep = (document: number) => {
    if (exclusion === null || ((exclusion[document >>> 5] >>> (document & 31)) & 1) === 0) found.push(document);
  };
  if (rarest.dense) rarest.forEachFrom(0, keep);
  else rarest.forEach(keep);
  for (const list of others) {
    if (list.dense) {
      const bits = list.bits as Uint32Array;
      found = found.filter((document) => ((bits[document >>> 5] >>> (document & 31)) & 1) === 1);
      continue;
    }
    const holding: number[] = [];
    let next = 0;
    list.forEach((document) => {
      while (next < found.length && found[next] < document) next++;
      if (next < found.length && found[next] === document) holding.push(document);
    });
    found = holding;
  }
  return Int32Array.from(found);
}

/** Each candidate's posting in one term's list: where its positions start, and its frequency byte. */
interface CandidatePostings {
  offsets: Int32Array;
  frequencies: Uint8Array;
}

/** Every candidate must hold the term. */
function postingsOf(list: PostingList, positions: Uint8Array, candidates: Int32Array): CandidatePostings {
  const found: CandidatePostings = { offsets: new Int32Array(candidates.length), frequencies: new Uint8Array(candidates.length) };
  if (candidates.length === 0) return found;
  if (list.dense) {
    denseOffsets(list, positions, candidates, found);
    return found;
  }
  let next = 0;
  list.forEachWithPositions(positions, (document, frequency, offset) => {
    if (next < candidates.length && candidates[next] === document) {
      found.offsets[next] = offset;
      found.frequencies[next++] = frequency;
    }
  });
  return found;
}

/**
 * A dense list's postings are found by rank, and their positions from the start of their group's
 * (see PostingList.positionGroupOffsets), or from the last candidate's when it was in the same
 * group: a phrase of rare and common words reads the common word's positions near the candidates only.
 */
function denseOffsets(list: PostingList, positions: Uint8Array, candidates: Int32Array, found: CandidatePostings): void {
  const bits = list.bits as Uint32Array;
  const groupRanks = list.groupRanks as Uint32Array;
  const wordRanks = list.wordRanks as Uint8Array;
  const frequencies = list.frequencies as Uint8Array;
  const groupOffsets = list.positionGroupOffsets(positions);
  const counts = new Int32Array(3);
  let cursorRank = -1;
  let cursorOffset = 0;
  for (let candidate = 0; candidate < candidates.length; candidate++) {
    const document = candidates[candidate];
    const word = document >>> 5;
    const group = word >>> RANK_GROUP_SHIFT;
    const rank = groupRanks[group] + wordRanks[word] + popcount(bits[word] & ((1 << (document & 31)) - 1));
    if (cursorRank < groupRanks[group]) {
      cursorRank = groupRanks[group];
      cursorOffset = groupOffsets[group];
    }
    for (; cursorRank < rank; cursorRank++) {
      readPositionCounts(positions, cursorOffset, frequencies[cursorRank], counts);
      cursorOffset = counts[2];
      for (let count = counts[0] + counts[1]; count > 0; count--) while (positions[cursorOffset++] & 0x80);
    }
    found.offsets[candidate] = cursorOffset;
    found.frequencies[candidate] = frequencies[rank];
  }
}

/**
 * Whether one document's field holds the phrase: per slot of the phrase that a term fills, that
 * term's positions less the slot, read one at a time from the posting; the phrase holds where
 * all of them meet on one start (a leapfrog join), so a document is read only up to its first
 * occurrence of the phrase. Text positions count from TEXT_POSITIONS: a phrase never spans fields.
 */
class PhraseStarts {
  private readonly bytes: Uint8Array[];
  private readonly offsets: Int32Array;
  /** Positions left in the field being read, and in the text after it. */
  private readonly left: Int32Array;
  private readonly textLeft: Int32Array;
  private readonly base: Int32Array;
  private readonly position: Int32Array;
  /** The current start: position plus base less the slot. */
  private readonly value: Int32Array;
  private readonly counts = new Int32Array(3);

  constructor(
    private readonly slots: number[],
    private readonly field: SearchField,
  ) {
    const count = slots.length;
    this.bytes = new Array<Uint8Array>(count);
    this.offsets = new Int32Array(count);
    this.left = new Int32Array(count);
    this.textLeft = new Int32Array(count);
    this.base = new Int32Array(count);
    this.position = new Int32Array(count);
    this.value = new Int32Array(count);
  }

  /** Starts slot `index` on the posting at `offset` of a list's positions. */
  set(index: number, bytes: Uint8Array, offset: number, frequency: number): void {
    readPositionCounts(bytes, offset, frequency, this.counts);
    offset = this.counts[2];
    let title = this.counts[0];
    const text = this.counts[1];
    if (this.field === 'text') {
      for (; title > 0; title--) while (bytes[offset++] & 0x80);
    }
    this.bytes[index] = bytes;
    this.offsets[index] = offset;
    this.position[index] = 0;
    if (this.field === 'text' || title === 0) {
      this.left[index] = this.field === 'title' ? 0 : text;
      this.textLeft[index] = 0;
      this.base[index] = TEXT_POSITIONS;
    } else {
      this.left[index] = title;
      this.textLeft[index] = this.field === 'title' ? 0 : text;
      this.base[index] = 0;
    }
  }

  /** Whether every slot reaches one common start. */
  meet(): boolean {
    const count = this.slots.length;
    const value = this.value;
    let target = -TEXT_POSITIONS;
    for (let index = 0; index < count; index++) {
      if (!this.advance(index)) return false;
      if (value[index] > target) target = value[index];
    }
    let agreed = 0;
    for (let index = 0; agreed < count; index = index + 1 === count ? 0 : index + 1) {
      while (value[index] < target) if (!this.advance(index)) return false;
      if (value[index] > target) {
        target = value[index];
        agreed = 1;
      } else agreed++;
    }
    return true;
  }

  /** The slot's next start, into `value`; false when its positions are spent. */
  private advance(index: number): boolean {
    if (this.left[index] === 0) {
      if (this.textLeft[index] === 0) return false;
      this.left[index] = this.textLeft[index];
      this.textLeft[index] = 0;
      this.base[index] = TEXT_POSITIONS;
      this.position[index] = 0;
    }
    const bytes = this.bytes[index];
    let offset = this.offsets[index];
    let byte = bytes[offset++];
    let gap = byte & 0x7f;
    // biome-ignore lint/suspicious/noAssignInExpressions: varint decoding reads the next byte inside the loop
    for (let bit = 7; byte & 0x80; bit += 7) gap |= ((byte = bytes[offset++]) & 0x7f) << bit;
    this.offsets[index] = offset;
    this.left[index]--;
    this.position[index] += gap;
    this.value[index] = this.base[index] + this.position[index] - this.slots[index];
    return true;
  }
}
