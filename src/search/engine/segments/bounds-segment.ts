import type { FieldBounds, PostingList } from '../postings.js';
import { FIELD_CODES } from '../scoring/bm25f.js';
import { resized } from '../typed-arrays.js';
import type { ArraySource, ReadSegment } from './segment-file.js';

/**
 * The block bounds dense lists keep for searches of title and text (see TextIndex.fieldBounds), in
 * a segment beside the lists: a start that read the lists without them computed them on its first
 * searches, 5-10 times slower for about a second at a million documents. Other fields' bounds are
 * computed when first searched, as they are after a build. Only bounds that cover every captured
 * document are kept: later changes then touch only the last block, which documents added after the
 * capture share, and only by raising it, so it is at worst looser, never too low.
 */
export function captureBounds(dense: PostingList[], documentCount: number): Record<string, ArraySource> {
  const words = (documentCount + 31) >>> 5;
  const blocks = words + 1;
  const documents = new Uint32Array(dense.length);
  const averages = new Float64Array(2 * dense.length);
  const saturation: Uint8Array[] = [];
  const none = new Uint8Array(blocks);
  dense.forEach((list, position) => {
    const bounds = list.fieldBounds[FIELD_CODES.all];
    if (!bounds || bounds.documents < documentCount) {
      saturation.push(none);
      return;
    }
    documents[position] = bounds.documents;
    averages[2 * position] = bounds.titleAverage;
    averages[2 * position + 1] = bounds.textAverage;
    saturation.push(bounds.saturation.length >= blocks ? bounds.saturation.subarray(0, blocks) : resized(bounds.saturation, blocks));
  });
  return {
    boundsDocuments: { type: 'u32', length: dense.length, pieces: () => [documents] },
    boundsAverages: { type: 'f64', length: 2 * dense.length, pieces: () => [averages] },
    boundsSaturation: { type: 'u8', length: dense.length * blocks, pieces: () => saturation },
  };
}

/** Gives the dense lists (in the order captured) the bounds captureBounds wrote, for the index's `documents`. */
export function restoreBounds(segment: ReadSegment, dense: PostingList[], documents: number): void {
  const words = (documents + 31) >>> 5;
  const blocks = words + 1;
  const covered = segment.array('boundsDocuments', 'u32');
  const averages = segment.array('boundsAverages', 'f64');
  const saturation = segment.array('boundsSaturation', 'u8');
  dense.forEach((list, position) => {
    if (covered[position] === 0) return;
    const own = saturation.subarray(position * blocks, (position + 1) * blocks);
    // Blocks past the captured documents' may have risen with documents added after the capture.
    own.fill(0, words);
    let highest = 0;
    for (let block = 0; block < words; block++) if (own[block] > highest) highest = own[block];
    const bounds: FieldBounds = {
      saturation: own,
      highest,
      documentsInField: 0,
      bits: null,
      documents: Math.min(covered[position], documents),
      titleAverage: averages[2 * position],
      textAverage: averages[2 * position + 1],
    };
    list.fieldBounds[FIELD_CODES.all] = bounds;
  });
}
