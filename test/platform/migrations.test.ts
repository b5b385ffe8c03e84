import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inVersionOrder } from '../../src/platform/migrations.js';

describe('migrations owned by their domains', () => {
  it('merges the domains’ migrations in version order', () => {
    const merged = inVersionOrder(
      [{ version: 2, sql: 'b' }],
      [
        { version: 3, sql: 'c' },
        { version: 1, sql: 'a' },
      ],
    );
    assert.deepEqual(merged, ['a', 'b', 'c']);
  });

  it('refuses a gap or a repeat, naming where', () => {
    assert.throws(() => inVersionOrder([{ version: 1, sql: 'a' }], [{ version: 3, sql: 'c' }]), /found 3 at 2/);
    assert.throws(() => inVersionOrder([{ version: 1, sql: 'a' }], [{ version: 1, sql: 'b' }]), /found 1 at 2/);
  });
});
