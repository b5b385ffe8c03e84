import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SharedDocuments } from '../../../src/search/engine/shared-documents.js';
import { random } from '../../support/random.js';

describe('SharedDocuments', () => {
  it('counts the documents two bitmaps share as they grow, each pair on its own', () => {
    const next = random(5);
    const capacity = 4096;
    const bitmaps = [new Uint32Array(capacity >>> 5), new Uint32Array(capacity >>> 5), new Uint32Array(capacity >>> 5)];
    const shared = new SharedDocuments();
    for (let documents = 0; documents < capacity; ) {
      const added = 1 + Math.floor(next() * 70);
      for (let document = documents; document < Math.min(capacity, documents + added); document++) {
        for (const bits of bitmaps) if (next() < 0.5) bits[document >>> 5] |= 1 << (document & 31);
      }
      documents = Math.min(capacity, documents + added);
      for (const [first, second] of [
        [0, 1],
        [1, 2],
        [0, 2],
      ] as const) {
        let expected = 0;
        for (let document = 0; document < documents; document++) {
          const bit = 1 << (document & 31);
          if ((bitmaps[first][document >>> 5] & bit) !== 0 && (bitmaps[second][document >>> 5] & bit) !== 0) expected++;
        }
        assert.equal(
          shared.count(`${first}:${second}`, bitmaps[first], bitmaps[second], documents),
          expected,
          `${documents} documents, pair ${first}:${second}`,
        );
      }
    }
  });
});
