/**
 * Sets of documents as a structured query combines them: row ids ascending, each with its score
 * (0 for a clause that does not score). The set algebra of a bool query, merge by merge.
 */
export interface ScoredRows {
  rowids: Float64Array;
  scores: Float64Array;
}

export const NO_ROWS: ScoredRows = { rowids: new Float64Array(0), scores: new Float64Array(0) };

/** The rows in both, their scores added. */
export function intersect(a: ScoredRows, b: ScoredRows): ScoredRows {
  const length = Math.min(a.rowids.length, b.rowids.length);
  const rowids = new Float64Array(length);
  const scores = new Float64Array(length);
  let count = 0;
  for (let i = 0, j = 0; i < a.rowids.length && j < b.rowids.length; ) {
    if (a.rowids[i] < b.rowids[j]) i++;
    else if (a.rowids[i] > b.rowids[j]) j++;
    else {
      rowids[count] = a.rowids[i];
      scores[count++] = a.scores[i++] + b.scores[j++];
    }
  }
  return { rowids: rowids.subarray(0, count), scores: scores.subarray(0, count) };
}

/** The rows of `a` that are not in `b`, with their scores in `a`. */
export function subtract(a: ScoredRows, b: ScoredRows): ScoredRows {
  const rowids = new Float64Array(a.rowids.length);
  const scores = new Float64Array(a.rowids.length);
  let count = 0;
  let j = 0;
  for (let i = 0; i < a.rowids.length; i++) {
    while (j < b.rowids.length && b.rowids[j] < a.rowids[i]) j++;
    if (j < b.rowids.length && b.rowids[j] === a.rowids[i]) continue;
    rowids[count] = a.rowids[i];
    scores[count++] = a.scores[i];
  }
  return { rowids: rowids.subarray(0, count), scores: scores.subarray(0, count) };
}

/** Rows in any of several sets, with how many of the sets hold each (see addToUnion). */
export type UnitedRows = ScoredRows & { counts: Uint16Array };

export const NO_UNION: UnitedRows = { ...NO_ROWS, counts: new Uint16Array(0) };

/**
 * The union with one more set: each row's count of the sets holding it, and its scores combined,
 * summed (a bool's should clauses) or the highest (a dis_max). Sets are added one at a time, so
 * that no more than two are held at once.
 */
export function addToUnion(united: UnitedRows, set: ScoredRows, combine: 'sum' | 'max'): UnitedRows {
  const length = united.rowids.length + set.rowids.length;
  const rowids = new Float64Array(length);
  const scores = new Float64Array(length);
  const counts = new Uint16Array(length);
  let count = 0;
  let i = 0;
  let j = 0;
  while (i < united.rowids.length || j < set.rowids.length) {
    const left = i < united.rowids.length ? united.rowids[i] : Infinity;
    const right = j < set.rowids.length ? set.rowids[j] : Infinity;
    if (left < right) {
      rowids[count] = left;
      scores[count] = united.scores[i];
      counts[count++] = united.counts[i++];
    } else if (right < left) {
      rowids[count] = right;
      scores[count] = set.scores[j++];
      counts[count++] = 1;
    } else {
      rowids[count] = left;
      scores[count] = combine === 'sum' ? united.scores[i] + set.scores[j] : Math.max(united.scores[i], set.scores[j]);
      counts[count++] = united.counts[i++] + 1;
      j++;
    }
  }
  return { rowids: rowids.subarray(0, count), scores: scores.subarray(0, count), counts: counts.subarray(0, count) };
}

/** The rows whose count (see addToUnion) reaches `minimum`. */
export function holdingAtLeast(rows: UnitedRows, minimum: number): ScoredRows {
  if (minimum <= 1) return rows;
  const rowids = new Float64Array(rows.rowids.length);
  const scores = new Float64Array(rows.rowids.length);
  let count = 0;
  for (let i = 0; i < rows.rowids.length; i++) {
    if (rows.counts[i] < minimum) continue;
    rowids[count] = rows.rowids[i];
    scores[count++] = rows.scores[i];
  }
  return { rowids: rowids.subarray(0, count), scores: scores.subarray(0, count) };
}

/** The scores times `boost`. */
export function boosted(rows: ScoredRows, boost: number): ScoredRows {
  return boost === 1 ? rows : { rowids: rows.rowids, scores: rows.scores.map((score) => score * boost) };
}

/** The same rows, scoring nothing (a filter). */
export function unscored(rows: ScoredRows): ScoredRows {
  return { rowids: rows.rowids, scores: new Float64Array(rows.rowids.length) };
}
