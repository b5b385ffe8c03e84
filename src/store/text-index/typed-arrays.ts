type NumberArray = Uint8Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/** A copy of `array` with room for `size` elements: grown with zeros, or cut to its first `size`. */
export function resized<T extends NumberArray>(array: T, size: number): T {
  const copy = new (array.constructor as new (size: number) => T)(size);
  copy.set(array.length > size ? (array.subarray(0, size) as T) : array);
  return copy;
}

/** The position of `value` among the first `count` elements of `sorted` (ascending), or -1. */
export function positionOf(sorted: Float64Array, count: number, value: number): number {
  let low = 0;
  let high = count - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const found = sorted[middle]!;
    if (found === value) return middle;
    if (found < value) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
