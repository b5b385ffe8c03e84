import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { positionOf, radixSort } from '../../../src/search/engine/typed-arrays.js';
import { random } from '../../support/random.js';

describe('radixSort', () => {
  it('sorts the first count values as the built-in sort does, for values of one to four bytes, leaving the rest alone', () => {
    const next = random(11);
    for (const largest of [1, 255, 256, 65_535, 70_000, 1 << 24, 2 ** 31, 2 ** 32 - 1]) {
      for (const count of [0, 1, 2, 17, 300, 2000]) {
        const values = Uint32Array.from({ length: count + 5 }, () => Math.floor(next() * (largest + 1)));
        if (count > 0) values[Math.floor(next() * count)] = largest;
        const expected = Uint32Array.from(values);
        expected.subarray(0, count).sort();
        radixSort(values, count, new Uint32Array(count));
        assert.deepEqual(values, expected, `largest ${largest}, count ${count}`);
      }
    }
  });

  it('keeps duplicates', () => {
    const values = Uint32Array.from([5, 3, 5, 0, 70_000, 3, 70_000, 5]);
    radixSort(values, values.length, new Uint32Array(values.length));
    assert.deepEqual([...values], [0, 3, 3, 5, 5, 5, 70_000, 70_000]);
  });
});

describe('positionOf', () => {
  /** What a scan finds: the position of `value` among the first `count`, or -1. */
  const scanned = (sorted: Float64Array, count: number, value: number) => sorted.subarray(0, count).indexOf(value);

  it('finds every value and refuses every absent one, for consecutive ids, ids with gaps of every size, and lone ones', () => {
    const next = random(24);
    const layouts: Array<(count: number) => Float64Array> = [
      (count) => Float64Array.from({ length: count }, (_, index) => index + 1),
      (count) => {
        let id = 0;
        return Float64Array.from({ length: count }, () => (id += next() < 0.9 ? 1 : 1 + Math.floor(next() * 50)));
      },
      // One huge gap: the range puts every guess far from most values.
      (count) => Float64Array.from({ length: count }, (_, index) => (index < count - 1 ? index + 1 : 1e12)),
      (count) => Float64Array.from({ length: count }, (_, index) => (index === 0 ? 1 : 1e9 + index)),
      (count) => {
        let id = 0;
        return Float64Array.from({ length: count }, () => (id += 1 + Math.floor(next() ** 8 * 100_000)));
      },
    ];
    for (const layout of layouts) {
      for (const count of [0, 1, 2, 3, 10, 1000]) {
        // Room past `count` holding larger ids, which must not be found.
        const ids = layout(count + 3);
        const highest = count > 0 ? ids[count - 1] : 0;
        const probes = [...ids, 0, -1, highest + 1, 1e13, 0.5];
        for (let index = 0; index < 200; index++) probes.push(Math.floor(next() * (highest + 2)));
        for (const value of probes) assert.equal(positionOf(ids, count, value), scanned(ids, count, value), `count ${count}, value ${value}`);
      }
    }
  });
});
