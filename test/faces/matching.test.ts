import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { confidenceOf, DEFAULT_THRESHOLD, distance, rankFaces } from '../../src/faces/engine/matching.js';

/** Descriptors of the shared set computed with the pinned engine (see the data set's README). */
const reference = JSON.parse(readFileSync(new URL('../fixtures/faces/descriptors-faceapi-1.7.15-ssd.json', import.meta.url), 'utf8')) as {
  items: Array<{ file: string; identity: string; descriptor: number[] | null; cropMode: boolean }>;
};
const faces = reference.items.filter((item) => item.descriptor && !item.cropMode);

describe('face matching', () => {
  it('maps distance to confidence in [0, 1], falling with distance, 0.5 at the calibrated midpoint', () => {
    let previous = 1;
    for (let d = 0; d <= 2; d += 0.01) {
      const confidence = confidenceOf(d);
      assert.ok(confidence >= 0 && confidence <= 1 && confidence <= previous);
      previous = confidence;
    }
    assert.equal(confidenceOf(0.6), 0.5);
  });

  it('keeps same-person pairs above the default threshold and nearly all others below (precomputed descriptors)', () => {
    let samePairs = 0;
    let sameKept = 0;
    let differentPairs = 0;
    let differentKept = 0;
    for (let a = 0; a < faces.length; a++) {
      for (let b = a + 1; b < faces.length; b++) {
        const kept = confidenceOf(distance(faces[a].descriptor!, faces[b].descriptor!)) >= DEFAULT_THRESHOLD;
        if (faces[a].identity === faces[b].identity) {
          samePairs++;
          if (kept) sameKept++;
        } else {
          differentPairs++;
          if (kept) differentKept++;
        }
      }
    }
    assert.equal(sameKept, samePairs, 'every same-person pair passes the default threshold');
    assert.ok(differentKept / differentPairs < 0.02, `${differentKept} of ${differentPairs} different-person pairs pass`);
  });

  it('ranks the gallery best first, cuts at top_k and threshold, and threshold 0 returns the nearest whatever their distance', () => {
    const gallery = faces.slice(0, 30).map((item) => ({
      docId: item.file,
      descriptor: Float32Array.from(item.descriptor!),
      faceFile: `https://faces.example/${item.file}`,
      attributes: { identity: item.identity },
    }));
    const probe = faces[0].descriptor!;
    const ranked = rankFaces(probe, gallery, 5, 0);
    assert.equal(ranked.length, 5);
    assert.equal(ranked[0].doc_id, faces[0].file);
    assert.deepEqual(ranked[0].attributes, { identity: faces[0].identity });
    for (let index = 1; index < ranked.length; index++) assert.ok(ranked[index - 1].confidence >= ranked[index].confidence);
    const strict = rankFaces(probe, gallery, 10, 0.99);
    assert.ok(strict.every((match) => match.confidence >= 0.99));
    const far = rankFaces(new Array(128).fill(1), gallery, 3, 0);
    assert.equal(far.length, 3, 'threshold 0 returns the nearest faces even when none is close');
  });
});
