type NumberArray = Uint8Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/** A copy of `array` with room for `size` elements: grown with zeros, or cut to its first `size`. */
export function resized<T extends NumberArray>(array: T, size: number): T {
  const copy = new (array.constructor as new (size: number) => T)(size);
  copy.set(array.length > size ? (array.subarray(0, size) as T) : array);
  return copy;
}

/**
 * The position of `value` among the first `count` elements of `sorted` (ascending, no repeats),
 * or -1. Row ids are nearly consecutive (gaps only where rows were deleted or replaced), so the
 * position their range implies is at or near the one sought: the search starts there and widens
 * by doubling steps until it brackets the value, then halves. A binary search over the whole array
 * touched about 20 elements, most of them cache misses at a million documents; it ran for every
 * hit answered, on the main thread.
 */
export function positionOf(sorted: Float64Array, count: number, value: number): number {
  if (count === 0) return -1;
  const first = sorted[0];
  const last = sorted[count - 1];
  if (!(value >= first && value <= last)) return -1;
  const guess = last === first ? 0 : Math.min(count - 1, Math.floor(((value - first) / (last - first)) * (count - 1)));
  const found = sorted[guess];
  if (found === value) return guess;
  let low: number;
  let high: number;
  if (found < value) {
    low = guess + 1;
    let step = 1;
    while (guess + step < count - 1 && sorted[guess + step] < value) {
      low = guess + step + 1;
      step *= 2;
    }
    high = Math.min(guess + step, count - 1);
  } else {
    high = guess - 1;
    let step = 1;
    while (guess - step > 0 && sorted[guess - step] > value) {
      high = guess - step - 1;
      step *= 2;
    }
    low = Math.max(guess - step, 0);
  }
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = sorted[middle];
    if (at === value) return middle;
    if (at < value) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

const RADIX_BITS = 8;
const radixCounts = new Int32Array(1 << RADIX_BITS);

/**
 * Sorts the first `count` elements of `values` ascending, a byte of the values at a time (least
 * significant first), through `scratch` (at least `count` long); as many passes as the largest
 * value has bytes. For a document's few hundred term ids it took under half the time of
 * `TypedArray.prototype.sort`, whose comparisons of random ids are mostly mispredicted branches.
 */
export function radixSort(values: Uint32Array, count: number, scratch: Uint32Array): void {
  let largest = 0;
  for (let index = 0; index < count; index++) if (values[index] > largest) largest = values[index];
  let from = values;
  let to = scratch;
  for (let shift = 0; shift === 0 || (shift < 32 && largest >>> shift !== 0); shift += RADIX_BITS) {
    radixCounts.fill(0);
    for (let index = 0; index < count; index++) radixCounts[(from[index] >>> shift) & 0xff]++;
    let before = 0;
    for (let digit = 0; digit < radixCounts.length; digit++) {
      const digitCount = radixCounts[digit];
      radixCounts[digit] = before;
      before += digitCount;
    }
    for (let index = 0; index < count; index++) {
      const value = from[index];
      to[radixCounts[(value >>> shift) & 0xff]++] = value;
    }
    const filled = to;
    to = from;
    from = filled;
  }
  if (from !== values) values.set(from.subarray(0, count));
}
