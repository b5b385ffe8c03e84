import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newFloorSlots, ShareFloors } from '../../../src/store/text-index/share-floors.js';

describe('ShareFloors', () => {
  it("gives a thread the highest k-th best score the other threads recorded for the same search, rounded down, never its own", () => {
    const slots = newFloorSlots(3);
    const [first, second, third] = [0, 1, 2].map((thread) => new ShareFloors(slots, thread));
    assert.equal(first!.floorFor(7), 0);
    second!.publish(7, 3.3);
    third!.publish(7, 2.5);
    first!.publish(7, 9);
    const floor = first!.floorFor(7);
    assert.ok(floor <= 3.3 && floor > 3.3 - 1e-6, `floor ${floor}`);
    assert.equal(second!.floorFor(7), 9);
    assert.equal(first!.floorFor(8), 0, 'another search');
  });

  it('forgets a search once its slot is taken by a later one, and records nothing for a share without k hits', () => {
    const slots = newFloorSlots(2);
    const [first, second] = [0, 1].map((thread) => new ShareFloors(slots, thread));
    second!.publish(5, 1.5);
    second!.publish(5 + 4096, 2.5);
    assert.equal(first!.floorFor(5), 0);
    assert.equal(first!.floorFor(5 + 4096), 2.5);
    second!.publish(6, 0);
    assert.equal(first!.floorFor(6), 0);
  });
});
