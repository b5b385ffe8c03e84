type NumberArray = Uint8Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/** A copy of `array` with room for `size` elements: grown with zeros, or cut to its first `size`. */
export function resized<T extends NumberArray>(array: T, size: number): T {
  const copy = new (array.constructor as new (size: number) => T)(size);
  copy.set(array.length > size ? (array.subarray(0, size) as T) : array);
  return copy;
}
