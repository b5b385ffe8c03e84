import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { cli } from '../support/cli-helper.js';
import { tempDir } from '../support/helper.js';

describe('metered-search admin tokens', () => {
  const dir = tempDir();
  const env = { DATA_DIR: dir.path };
  after(() => dir.remove());

  it('creates a token printed once, lists it without the token, and revokes it', async () => {
    const created = await cli(env, 'admin', 'tokens', 'create', '--name', 'billing', '--read-only', '--json');
    assert.equal(created.code, 0, created.stderr);
    const token = JSON.parse(created.stdout) as { token: string; id: string; name: string; read_only: boolean };
    assert.match(token.token, /^msadmin_[0-9a-f]{64}$/);
    assert.deepEqual({ name: token.name, read_only: token.read_only }, { name: 'billing', read_only: true });

    const listed = await cli(env, 'admin', 'tokens', 'list', '--json');
    assert.ok(!listed.stdout.includes(token.token), 'the plain token is never listed');
    assert.deepEqual(
      (JSON.parse(listed.stdout) as Array<{ id: string; revokedAt: string | null }>).map((entry) => [entry.id, entry.revokedAt]),
      [[token.id, null]],
    );

    assert.equal((await cli(env, 'admin', 'tokens', 'revoke', token.id)).code, 0);
    const after = JSON.parse((await cli(env, 'admin', 'tokens', 'list', '--json')).stdout) as Array<{ revokedAt: string | null }>;
    assert.ok(after[0].revokedAt);
    const unknown = await cli(env, 'admin', 'tokens', 'revoke', 'tok_nope');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No admin token/);
  });

  it('creates a token with the scopes named, refusing names it does not know, and lists its scopes', async () => {
    const created = await cli(env, 'admin', 'tokens', 'create', '--name', 'stripe-sync', '--scopes', 'credits:write,keys:read', '--json');
    assert.equal(created.code, 0, created.stderr);
    const token = JSON.parse(created.stdout) as { id: string; read_only: boolean; scopes: string[] };
    assert.deepEqual([token.read_only, token.scopes], [false, ['keys:read', 'credits:write']]);
    const listed = await cli(env, 'admin', 'tokens', 'list');
    assert.match(listed.stdout, new RegExp(`${token.id} {2}stripe-sync {2}keys:read,credits:write`));
    const unknown = await cli(env, 'admin', 'tokens', 'create', '--name', 'x', '--scopes', 'keys:read,everything');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /--scopes takes scopes from: accounts:read, .*; not everything/);
    const both = await cli(env, 'admin', 'tokens', 'create', '--name', 'x', '--scopes', 'keys:read', '--read-only');
    assert.match(both.stderr, /not both/);
  });

  it('records key changes made from the command line in the audit log, as the CLI', async () => {
    const created = JSON.parse((await cli(env, 'keys', 'create', '--credits', '3', '--json')).stdout) as { id: string };
    assert.equal((await cli(env, 'keys', 'topup', created.id, '--credits', '4')).code, 0);
    assert.equal((await cli(env, 'keys', 'disable', created.id)).code, 0);
    const store = new SqliteStore(dir.path);
    try {
      const entries = (await store.admin.listAudit(10, null)).items.filter((entry) => entry.target === created.id);
      assert.deepEqual(
        entries.map((entry) => [entry.actor, entry.action]),
        [
          ['cli', 'keys.disable'],
          ['cli', 'keys.topup'],
          ['cli', 'keys.create'],
        ],
      );
      assert.deepEqual(entries[1].detail, { credits: 4, balance: 7, reference: null, expires_at: null });
    } finally {
      await store.close();
    }
  });
});
