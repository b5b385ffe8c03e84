import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

describe('admin API: who may call it', () => {
  let context: TestContext;
  let writer: string;
  let reader: string;
  before(async () => {
    context = await createTestApp();
    const tokens = new AdminTokens(context.store.admin);
    writer = (await tokens.create('billing', false)).token;
    reader = (await tokens.create('dashboard', true)).token;
  });
  after(async () => context.close());

  const listKeys = (authorization?: string) =>
    context.app.inject({ url: '/admin/keys', headers: authorization === undefined ? {} : { authorization } });

  it('answers 401 without a token, with a malformed one, or with an API key in its place', async () => {
    assertEnvelope(await listKeys(), 401, /Bearer/);
    assertEnvelope(await listKeys(`Basic ${writer}`), 401);
    assertEnvelope(await listKeys(`Bearer ${writer}x`), 401);
    const apiKey = await context.createKey(5);
    assertEnvelope(await listKeys(`Bearer ${apiKey}`), 401);
    assertEnvelope(await listKeys(`Bearer msadmin_${'0'.repeat(64)}`), 401, /not recognised/);
  });

  it('never takes a token as an API key', async () => {
    const response = await context.app.inject({ url: '/credits', headers: { 'x-api-key': writer } });
    assertEnvelope(response, 400, /64 hexadecimal/);
  });

  it('lets a read-only token read and refuses it any change (403), changing nothing', async () => {
    assert.equal((await listKeys(`Bearer ${reader}`)).statusCode, 200);
    const before = json(await listKeys(`Bearer ${reader}`)).keys.length;
    const refused = await context.app.inject({
      method: 'POST',
      url: '/admin/keys',
      headers: { authorization: `Bearer ${reader}` },
      payload: { credits: 5 },
    });
    assertEnvelope(refused, 403, /read-only/);
    assert.equal(json(await listKeys(`Bearer ${reader}`)).keys.length, before);
  });

  it('refuses a revoked token (401) from its next request on', async () => {
    const tokens = new AdminTokens(context.store.admin);
    const { token, record } = await tokens.create('short-lived', false);
    assert.equal((await listKeys(`Bearer ${token}`)).statusCode, 200);
    await tokens.revoke(record.id);
    assertEnvelope(await listKeys(`Bearer ${token}`), 401);
  });
});
