import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { periodIndex, periodStart } from '../../src/billing/refills.js';

describe('refill periods', () => {
  const anchor = new Date('2026-01-31T10:00:00.000Z');

  it('counts days and weeks from the anchor', () => {
    assert.equal(periodStart(anchor, 'day', 3).toISOString(), '2026-02-03T10:00:00.000Z');
    assert.equal(periodStart(anchor, 'week', 2).toISOString(), '2026-02-14T10:00:00.000Z');
    assert.equal(periodIndex(anchor, 'day', new Date('2026-02-03T09:59:59.999Z')), 2);
    assert.equal(periodIndex(anchor, 'day', new Date('2026-02-03T10:00:00.000Z')), 3);
    assert.equal(periodIndex(anchor, 'week', new Date('2026-01-31T09:00:00.000Z')), -1);
  });

  it('counts calendar months, clamping the day to the month', () => {
    assert.deepEqual(
      [1, 2, 13].map((index) => periodStart(anchor, 'month', index).toISOString()),
      ['2026-02-28T10:00:00.000Z', '2026-03-31T10:00:00.000Z', '2027-02-28T10:00:00.000Z'],
    );
    assert.equal(periodIndex(anchor, 'month', new Date('2026-02-28T09:59:00.000Z')), 0);
    assert.equal(periodIndex(anchor, 'month', new Date('2026-02-28T10:00:00.000Z')), 1);
    assert.equal(periodIndex(anchor, 'month', new Date('2029-07-04T00:00:00.000Z')), 41);
  });
});
