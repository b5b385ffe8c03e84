import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_SCOPES, READ_SCOPES } from '../../../src/admin/admin-scopes.js';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

/** Each admin route checks its one scope: a billing system's token tops up, and deletes no document. Runs on both stores. */
describe('admin API: scoped tokens', () => {
  let context: TestContext;
  let operator: string;
  let billing: string;
  let reader: string;
  before(async () => {
    context = await createTestApp();
    const tokens = new AdminTokens(context.store.admin);
    operator = (await tokens.create('operator', false)).token;
    billing = (await tokens.create('billing', ['credits:write', 'keys:read'])).token;
    reader = (await tokens.create('analyst', true)).token;
  });
  after(async () => context.close());

  const call = (token: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    context.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload && { payload }) });

  it('GET /admin/token lists what the token may do', async () => {
    assert.deepEqual(json(await call(operator, 'GET', '/admin/token')).scopes, [...ADMIN_SCOPES]);
    assert.deepEqual(json(await call(reader, 'GET', '/admin/token')), {
      id: json(await call(reader, 'GET', '/admin/token')).id,
      name: 'analyst',
      read_only: true,
      scopes: [...READ_SCOPES],
    });
    const shown = json(await call(billing, 'GET', '/admin/token'));
    assert.deepEqual([shown.read_only, shown.scopes], [false, ['keys:read', 'credits:write']]);
  });

  it('lets a billing token top up and read keys, and refuses it everything else with a 403 naming the scope', async () => {
    const key = json(await call(operator, 'POST', '/admin/keys', { credits: 1 }));
    const topUp = await call(billing, 'POST', `/admin/keys/${key.id}/topup`, { credits: 9 });
    assert.equal(topUp.statusCode, 200, topUp.body);
    assert.equal(json(await call(billing, 'GET', `/admin/keys/${key.id}`)).balance, 10);
    const refusals = [
      ['DELETE', '/admin/documents/gdpr-17', undefined, 'documents:write'],
      ['POST', '/admin/keys', { credits: 5 }, 'keys:write'],
      ['POST', `/admin/keys/${key.id}/revoke`, undefined, 'keys:write'],
      ['GET', '/admin/audit-log', undefined, 'audit:read'],
      ['GET', '/admin/webhooks', undefined, 'webhooks:read'],
      ['GET', '/admin/documents', undefined, 'documents:read'],
    ] as const;
    for (const [method, url, payload, scope] of refusals) {
      assertEnvelope(await call(billing, method, url, payload), 403, new RegExp(`lacks the scope ${scope}`));
    }
    assert.equal(json(await call(operator, 'GET', '/admin/documents/gdpr-17')).doc_id, 'gdpr-17', 'the document is still there');
    assert.equal(json(await call(operator, 'GET', `/admin/keys/${key.id}`)).status, 'active');
  });

  it('lets a read-only token read everything and change nothing, saying it is read-only', async () => {
    assert.equal((await call(reader, 'GET', '/admin/audit-log')).statusCode, 200);
    assert.equal((await call(reader, 'GET', '/admin/documents')).statusCode, 200);
    assertEnvelope(
      await call(reader, 'POST', '/admin/keys', { credits: 1 }),
      403,
      /read-only: it lacks the scope keys:write, which POST \/admin\/keys needs/,
    );
  });
});
