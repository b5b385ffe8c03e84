import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { tempDir } from '../support/helper.js';

describe('ADMIN_PORT: the admin API on a listener of its own', () => {
  it('serves /admin, the console and /metrics there only, and the public API on PORT only', async () => {
    const dir = tempDir();
    const seed = new SqliteStore(dir.path);
    const token = (await new AdminTokens(seed.admin).create('ops', false)).token;
    await seed.close();
    const server = await startServer(
      loadConfig({ DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', SEED_DEMO: 'false', LOG_LEVEL: 'silent', FACE_WORKERS: '0' }),
    );
    try {
      assert.ok(server.adminUrl && server.adminUrl !== server.url);
      const get = async (base: string, path: string) => {
        const response = await request(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
        await response.body.dump();
        return response.statusCode;
      };
      assert.equal(await get(server.adminUrl, '/admin/keys'), 200);
      assert.equal(await get(server.adminUrl, '/metrics'), 200);
      assert.equal(await get(server.adminUrl, '/console'), 200);
      assert.equal(await get(server.url, '/console'), 404);
      assert.equal(await get(server.adminUrl, '/credits'), 404);
      assert.equal(await get(server.url, '/admin/keys'), 404);
      assert.equal(await get(server.url, '/metrics'), 404);
      assert.equal(await get(server.url, '/version'), 200);
    } finally {
      await server.close();
      dir.remove();
    }
  });

  it('makes portal links at PUBLIC_URL, where the portal is; without it, a 409 saying to set it', async () => {
    const dir = tempDir();
    const seed = new SqliteStore(dir.path);
    const token = (await new AdminTokens(seed.admin).create('ops', false)).token;
    await seed.ledger.createAccount({ id: 'acct_portal', name: 'Portal', credits: 0 });
    await seed.close();
    const base = { DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', SEED_DEMO: 'false', LOG_LEVEL: 'silent', FACE_WORKERS: '0' };
    const link = async (env: Record<string, string>) => {
      const server = await startServer(loadConfig({ ...base, ...env }));
      try {
        const response = await request(`${server.adminUrl}/admin/accounts/acct_portal/portal-sessions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
        });
        return { status: response.statusCode, body: (await response.body.json()) as { url?: string; message?: string }, publicUrl: server.url };
      } finally {
        await server.close();
      }
    };
    try {
      const refused = await link({});
      assert.equal(refused.status, 409);
      assert.match(refused.body.message ?? '', /set PUBLIC_URL/);
      const made = await link({ PUBLIC_URL: 'https://api.example.com' });
      assert.equal(made.status, 201);
      assert.match(made.body.url ?? '', /^https:\/\/api\.example\.com\/portal\/sign-in\?token=/);
    } finally {
      dir.remove();
    }
  });
});
