import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newShareSlots, SHARED_SCORES, SharedBestScores } from '../../../../src/search/engine/threads/shared-best-scores.js';

describe('SharedBestScores', () => {
  it("gives a thread the other threads' best scores for the same search, best first, rounded down, never its own", () => {
    const slots = newShareSlots(3);
    const [first, second, third] = [0, 1, 2].map((thread) => new SharedBestScores(slots, thread));
    assert.deepEqual(first!.othersBest(7), []);
    second!.publish(7, [3.3, 1.25]);
    third!.publish(7, [2.5]);
    first!.publish(7, [9]);
    const best = first!.othersBest(7);
    assert.deepEqual(best.slice(1), [2.5, 1.25]);
    assert.ok(best[0] <= 3.3 && best[0] > 3.3 - 1e-6, `rounded down: ${best[0]}`);
    assert.deepEqual(second!.othersBest(7), [9, 2.5]);
    assert.deepEqual(first!.othersBest(8), [], 'another search');
  });

  it('keeps at most SHARED_SCORES scores a search, and forgets a search once a later one takes its slot', () => {
    const slots = newShareSlots(2);
    const [first, second] = [0, 1].map((thread) => new SharedBestScores(slots, thread));
    const many = Array.from({ length: 40 }, (_, index) => 100 - index);
    second!.publish(5, many);
    assert.deepEqual(first!.othersBest(5), many.slice(0, SHARED_SCORES));
    second!.publish(5 + 2048, [2.5]);
    assert.deepEqual(first!.othersBest(5), []);
    assert.deepEqual(first!.othersBest(5 + 2048), [2.5]);
  });
});
