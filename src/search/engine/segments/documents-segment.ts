import { DocumentLabels } from '../document-labels.js';
import { PostingList, RANK_GROUP_SHIFT } from '../postings.js';
import { captureBounds, restoreBounds } from './bounds-segment.js';
import { type ArraySource, type ReadSegment, StoredBytes } from './segment-file.js';

/** A TextIndex's documents and postings, as IndexedDocuments holds them. */
export interface DocumentsState {
  documents: number;
  live: number;
  deletedCount: number;
  titleTotal: number;
  textTotal: number;
  rowids: Float64Array;
  lengths: Uint16Array;
  wideLengths: Uint32Array | null;
  deleted: Uint32Array;
  lists: Array<PostingList | undefined>;
  labels: DocumentLabels;
}

/** Arrays a start leaves in the segment file (see readSegment): positions, read only by phrases, are the largest. */
export const ON_DISK_ARRAYS: readonly string[] = ['positions'];

/** A list's `positionBytes` in a segment when it keeps no positions. */
const NO_POSITIONS = 0xffffffff;

const NONE = 0;
const SPARSE = 1;
const DENSE = 2;

/**
 * What a segment of these documents holds, captured now and written later while the index goes on
 * changing. That is safe because every change after this either writes past what is captured
 * (appended documents and postings, labels) or replaces an array with a grown copy, except three:
 * deletions (the bitmap is copied here), list counts (copied here), and a dense list's last bitmap
 * word, which later documents share (masked to the captured documents when read back).
 */
export function captureDocuments(state: DocumentsState): { scalars: Record<string, number>; arrays: Record<string, ArraySource> } {
  const { documents, lists } = state;
  const words = (documents + 31) >>> 5;
  const groups = (words + (1 << RANK_GROUP_SHIFT) - 1) >>> RANK_GROUP_SHIFT;
  const terms = lists.length;
  const forms = new Uint8Array(terms);
  const counts = new Uint32Array(terms);
  const liveCounts = new Uint32Array(terms);
  const lastDocuments = new Int32Array(terms);
  const streamBytes = new Uint32Array(terms);
  const positionBytes = new Uint32Array(terms);
  const positions: Array<Uint8Array | StoredBytes> = [];
  let positionTotal = 0;
  const sparse: Uint8Array[] = [];
  const dense: PostingList[] = [];
  let streamTotal = 0;
  let frequencyTotal = 0;
  for (let termId = 0; termId < terms; termId++) {
    const list = lists[termId];
    if (!list) continue;
    counts[termId] = list.count;
    liveCounts[termId] = list.liveCount;
    lastDocuments[termId] = list.lastDocument;
    if (list.hasPositions) {
      positionBytes[termId] = list.positionBytes;
      positions.push(list.positions ? list.positions.subarray(0, list.positionBytes) : (list.storedPositions as StoredBytes));
      positionTotal += list.positionBytes;
    } else positionBytes[termId] = NO_POSITIONS;
    if (list.dense) {
      forms[termId] = DENSE;
      dense.push(list);
      frequencyTotal += list.count;
    } else {
      forms[termId] = SPARSE;
      streamBytes[termId] = list.streamBytes;
      sparse.push((list.stream as Uint8Array).subarray(0, list.streamBytes));
      streamTotal += list.streamBytes;
    }
  }
  // The arrays themselves, as they are now: a list that grows later gets new ones.
  const bits = dense.map((list) => (list.bits as Uint32Array).subarray(0, words));
  const groupRanks = dense.map((list) => (list.groupRanks as Uint32Array).subarray(0, groups));
  const wordRanks = dense.map((list) => (list.wordRanks as Uint8Array).subarray(0, words));
  const frequencies = dense.map((list) => (list.frequencies as Uint8Array).subarray(0, list.count));
  const { rowids, lengths, wideLengths } = state;
  const deleted = state.deleted.slice(0, words);
  const labels = state.labels.contents();
  const arrays: Record<string, ArraySource> = {
    rowids: { type: 'f64', length: 32 * words, pieces: () => [rowids.subarray(0, documents)] },
    lengths: { type: 'u16', length: 32 * words, pieces: () => [lengths.subarray(0, documents)] },
    deleted: { type: 'u32', length: words, pieces: () => [deleted] },
    forms: { type: 'u8', length: terms, pieces: () => [forms] },
    counts: { type: 'u32', length: terms, pieces: () => [counts] },
    liveCounts: { type: 'u32', length: terms, pieces: () => [liveCounts] },
    lastDocuments: { type: 'i32', length: terms, pieces: () => [lastDocuments] },
    streamBytes: { type: 'u32', length: terms, pieces: () => [streamBytes] },
    streams: { type: 'u8', length: streamTotal, pieces: () => sparse },
    bits: { type: 'u32', length: dense.length * words, pieces: () => bits },
    groupRanks: { type: 'u32', length: dense.length * groups, pieces: () => groupRanks },
    wordRanks: { type: 'u8', length: dense.length * words, pieces: () => wordRanks },
    frequencies: { type: 'u8', length: frequencyTotal, pieces: () => frequencies },
    positionBytes: { type: 'u32', length: terms, pieces: () => [positionBytes] },
    positions: { type: 'u8', length: positionTotal, pieces: () => positionPieces(positions) },
    labelBytes: { type: 'u8', length: labels.bytes.length, pieces: () => [labels.bytes] },
    labelEnds: { type: 'u32', length: labels.ends.length, pieces: () => [labels.ends] },
    ...captureBounds(dense, documents),
  };
  if (wideLengths) arrays.wideLengths = { type: 'u32', length: 64 * words, pieces: () => [wideLengths.subarray(0, 2 * documents)] };
  const scalars = { documents, live: state.live, deletedCount: state.deletedCount, titleTotal: state.titleTotal, textTotal: state.textTotal };
  return { scalars, arrays };
}

/** Stored positions are read for a write this many bytes at a time, neighbouring lists' together. */
const STORED_READ_BYTES = 4 << 20;

/** The lists' positions in order, those left in a segment file read as they are written. */
function* positionPieces(pieces: ReadonlyArray<Uint8Array | StoredBytes>): Generator<Uint8Array> {
  let pending: StoredBytes | null = null as StoredBytes | null;
  for (const piece of pieces) {
    if (piece instanceof Uint8Array) {
      if (pending) yield pending.read();
      pending = null;
      yield piece;
    } else if (pending?.isFollowedBy(piece) && pending.length + piece.length <= STORED_READ_BYTES) pending = pending.joined(piece);
    else {
      if (pending) yield pending.read();
      pending = piece;
    }
  }
  if (pending) yield pending.read();
}

/** The documents of a segment written by captureDocuments, as views of its buffer; capacity is the documents rounded up to 32. */
export function restoreDocuments(segment: ReadSegment): DocumentsState {
  const { documents, live, deletedCount, titleTotal, textTotal } = segment.scalars;
  const words = (documents + 31) >>> 5;
  const groups = (words + (1 << RANK_GROUP_SHIFT) - 1) >>> RANK_GROUP_SHIFT;
  const forms = segment.array('forms', 'u8');
  const counts = segment.array('counts', 'u32');
  const liveCounts = segment.array('liveCounts', 'u32');
  const lastDocuments = segment.array('lastDocuments', 'i32');
  const streamBytes = segment.array('streamBytes', 'u32');
  const streams = segment.array('streams', 'u8');
  const bits = segment.array('bits', 'u32');
  const groupRanks = segment.array('groupRanks', 'u32');
  const wordRanks = segment.array('wordRanks', 'u8');
  const frequencies = segment.array('frequencies', 'u8');
  // A segment written before lists kept positions has none.
  const positionBytes = segment.has('positionBytes') ? segment.array('positionBytes', 'u32') : null;
  const positions = !segment.has('positions') ? null : segment.isStored('positions') ? segment.stored('positions') : segment.array('positions', 'u8');
  let positionOffset = 0;
  const positionsOf = (termId: number): Uint8Array | StoredBytes | null => {
    if (!positionBytes || !positions || positionBytes[termId] === NO_POSITIONS) return null;
    const kept =
      positions instanceof StoredBytes
        ? positions.slice(positionOffset, positionOffset + positionBytes[termId])
        : positions.subarray(positionOffset, positionOffset + positionBytes[termId]);
    positionOffset += positionBytes[termId];
    return kept;
  };
  // Bits of documents past the captured ones: set by documents added after the capture (see captureDocuments).
  const lastWordMask = (documents & 31) === 0 ? 0xffffffff : (1 << (documents & 31)) - 1;
  const lists = new Array<PostingList | undefined>(forms.length);
  let streamOffset = 0;
  const dense: PostingList[] = [];
  let denseNumber = 0;
  let frequencyOffset = 0;
  for (let termId = 0; termId < forms.length; termId++) {
    const form = forms[termId];
    if (form === NONE) continue;
    const listCounts = { count: counts[termId], liveCount: liveCounts[termId], lastDocument: lastDocuments[termId] };
    if (form === SPARSE) {
      lists[termId] = PostingList.restored(
        listCounts,
        { stream: streams.subarray(streamOffset, streamOffset + streamBytes[termId]) },
        positionsOf(termId),
      );
      streamOffset += streamBytes[termId];
      continue;
    }
    const listBits = bits.subarray(denseNumber * words, (denseNumber + 1) * words);
    if (words > 0) listBits[words - 1] &= lastWordMask;
    const list = PostingList.restored(
      listCounts,
      {
        bits: listBits,
        groupRanks: groupRanks.subarray(denseNumber * groups, (denseNumber + 1) * groups),
        wordRanks: wordRanks.subarray(denseNumber * words, (denseNumber + 1) * words),
        frequencies: frequencies.subarray(frequencyOffset, frequencyOffset + counts[termId]),
      },
      positionsOf(termId),
    );
    lists[termId] = list;
    dense.push(list);
    frequencyOffset += counts[termId];
    denseNumber++;
  }
  restoreBounds(segment, dense, documents);
  return {
    documents,
    live,
    deletedCount,
    titleTotal,
    textTotal,
    rowids: segment.array('rowids', 'f64'),
    lengths: segment.array('lengths', 'u16'),
    wideLengths: segment.has('wideLengths') ? segment.array('wideLengths', 'u32') : null,
    deleted: segment.array('deleted', 'u32'),
    lists,
    labels: DocumentLabels.restored(segment.array('labelBytes', 'u8'), segment.array('labelEnds', 'u32')),
  };
}
