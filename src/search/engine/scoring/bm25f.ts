/**
 * BM25F (Robertson and Zaragoza): each field's term frequency is normalised by that field's own
 * length against its average, the title's counts twice, and the sum is saturated once. k1 and b
 * are the textbook defaults; the title weight says a word in a title tells twice what one in the
 * body does. Measured on SciFact in BENCHMARKS.md.
 */
export const BM25F = { k1: 1.2, b: 0.75, titleWeight: 2 } as const;

export const FIELD_CODES = { all: 0, title: 1, text: 2, metadata: 3 } as const;

/** Lengths whose normalisations are kept in a table: longer titles and texts have theirs computed. */
export const NORM_TABLE_SIZE = 4096;

/** A title's length takes the top TITLE_BITS of a document's 16 bits in `TextIndex.lengths`, its text's the rest. */
export const TITLE_BITS = 5;

export const TEXT_BITS = 16 - TITLE_BITS;

export const TEXT_MASK = (1 << TEXT_BITS) - 1;

/** In `TextIndex.lengths`: the lengths did not fit and are kept whole in `wideLengths`. */
export const WIDE = 0xffff;

export function norm(length: number, average: number, b: number): number {
  return average > 0 ? 1 / (1 - b + (b * length) / average) : 1;
}

/**
 * A posting's pseudo-frequency in the field searched (field codes as in FIELD_CODES), from its
 * frequency byte and its document's title and text normalisations: BM25F's weighted sum for title
 * and text, one field's normalised frequency, or a metadata field's words' count as it is.
 */
export function pseudoFrequency(field: number, frequency: number, titleNorm: number, textNorm: number): number {
  return field === 0
    ? BM25F.titleWeight * (frequency >>> 6) * titleNorm + (frequency & 63) * textNorm
    : field === 1
      ? (frequency >>> 6) * titleNorm
      : field === 2
        ? (frequency & 63) * textNorm
        : frequency & 63;
}

/** A length's normalisation from its table, or computed for a length beyond the table. */
export function normOf(table: Float32Array, length: number, average: number): number {
  return length < NORM_TABLE_SIZE ? table[length] : norm(length, average, BM25F.b);
}

/** now / then for averages, where a bound computed against an average of 0 answers for nothing else. */
export function averageRatio(now: number, then: number): number {
  if (then > 0) return now / then;
  return now > 0 ? Infinity : 1;
}

/** A document's title length, from `lengths` or, where it is WIDE, from `wide`. */
export function titleLengthAt(lengths: Uint16Array, wide: Uint32Array | null, document: number): number {
  const packed = lengths[document];
  return packed === WIDE ? wide![2 * document] : packed >>> TEXT_BITS;
}

/** A document's text length, from `lengths` or, where it is WIDE, from `wide`. */
export function textLengthAt(lengths: Uint16Array, wide: Uint32Array | null, document: number): number {
  const packed = lengths[document];
  return packed === WIDE ? wide![2 * document + 1] : packed & TEXT_MASK;
}
