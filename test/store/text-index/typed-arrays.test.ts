import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { radixSort } from '../../../src/store/text-index/typed-arrays.js';
import { random } from '../../random.js';

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
