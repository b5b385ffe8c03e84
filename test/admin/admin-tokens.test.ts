import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { tempDir } from '../support/helper.js';

describe('admin tokens', () => {
  const dir = tempDir();
  let store: SqliteStore;
  let tokens: AdminTokens;
  before(() => {
    store = new SqliteStore(dir.path);
    tokens = new AdminTokens(store.admin);
  });
  after(async () => {
    await store.close();
    dir.remove();
  });

  it('checks the Bearer scheme whatever its case, and nothing but a token of the right form', async () => {
    const { token, record } = await tokens.create('billing', false);
    for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER ${token}`, `Bearer  ${token} `]) {
      assert.deepEqual(await tokens.check(header), { outcome: 'ok', token: record }, header);
    }
    for (const header of [undefined, token, `Basic ${token}`, `Bearer ${token}x`, `Bearer ${'a'.repeat(64)}`, 'Bearer']) {
      assert.deepEqual(await tokens.check(header), { outcome: 'malformed' }, String(header));
    }
  });

  it('knows a revoked token no more, and never an unknown one', async () => {
    const { token, record } = await tokens.create('rotated', true);
    await tokens.revoke(record.id);
    assert.deepEqual(await tokens.check(`Bearer ${token}`), { outcome: 'unknown' });
    assert.deepEqual(await tokens.check(`Bearer msadmin_${'0'.repeat(64)}`), { outcome: 'unknown' });
  });
});
