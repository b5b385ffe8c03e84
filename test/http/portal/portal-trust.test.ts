import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { AdminScope } from '../../../src/admin/admin-scopes.js';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { AccountAdmin } from '../../../src/billing/account-admin.js';
import { KeyAdmin } from '../../../src/billing/key-admin.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

/** What a key, a former key and a portal link may take through the portal; runs on both stores. */
describe('the customer portal: nothing taken with an old or another key', () => {
  let context: TestContext;
  let website: string;
  let websiteId: string;
  let accountId: string;
  const keys: Record<'staging' | 'production', { key: string; id: string }> = {} as never;

  before(async () => {
    context = await createTestApp();
    const token = await new AdminTokens(context.store.admin).create('website', ['portal:write', 'keys:write', 'accounts:read']);
    website = `Bearer ${token.token}`;
    websiteId = token.record.id;
    const created = await new AccountAdmin(context.store.ledger).create({ name: 'Initech', credits: 50 });
    assert.equal(created.outcome, 'created');
    accountId = created.outcome === 'created' ? created.account.id : '';
    for (const name of ['staging', 'production'] as const) {
      const key = await new KeyAdmin(context.store.ledger).createInAccount(accountId, 0, name);
      if (key.outcome === 'created') keys[name] = { key: key.key, id: key.record.id };
    }
  });
  after(() => context.close());

  const withKey = (key: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    context.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload && { payload }) });
  const admin = (method: 'POST' | 'DELETE', url: string) => context.app.inject({ method, url, headers: { authorization: website } });
  const openLink = async () => {
    const { pathname, search } = new URL(json(await admin('POST', `/admin/accounts/${accountId}/portal-sessions`)).url);
    const opened = await context.app.inject({ url: `${pathname}${search}` });
    const cookie = String(opened.headers['set-cookie']).split(';')[0] as string;
    const csrf = json(await context.app.inject({ url: '/portal/api/account', headers: { cookie } })).csrf_token as string;
    return { cookie, csrf };
  };

  it("a key signed in may rename and roll only itself, never the account's other keys", async () => {
    const { staging, production } = keys;
    assertEnvelope(await withKey(staging.key, 'POST', `/portal/api/keys/${production.id}/roll`, { grace_seconds: 0 }), 403, /only that key/);
    assertEnvelope(await withKey(staging.key, 'PATCH', `/portal/api/keys/${production.id}`, { name: 'x' }), 403, /only that key/);
    assert.equal((await context.app.inject({ url: '/credits', headers: { 'x-api-key': production.key } })).statusCode, 200);
    const renamed = await withKey(staging.key, 'PATCH', `/portal/api/keys/${staging.id}`, { name: 'staging 2' });
    assert.deepEqual(json(renamed), { id: staging.id, name: 'staging 2' });
  });

  it('a portal link session manages every key of the account, audited as the admin token that made the link', async () => {
    const { cookie, csrf } = await openLink();
    const renamed = await context.app.inject({
      method: 'PATCH',
      url: `/portal/api/keys/${keys.production.id}`,
      headers: { cookie, 'x-csrf-token': csrf },
      payload: { name: 'production 2' },
    });
    assert.deepEqual(json(renamed), { id: keys.production.id, name: 'production 2' });
    const log = await context.store.admin.listAudit(100, null);
    const entry = log.items.find((item) => item.action === 'keys.update' && item.target === keys.production.id);
    assert.equal(entry?.actor, `portal:${accountId} (link of admin token ${websiteId})`);
  });

  it('DELETE portal-sessions signs every session out and voids unopened links, audited', async () => {
    const first = await openLink();
    const second = await openLink();
    const unopened = new URL(json(await admin('POST', `/admin/accounts/${accountId}/portal-sessions`)).url);
    const ended = await admin('DELETE', `/admin/accounts/${accountId}/portal-sessions`);
    assert.equal(ended.statusCode, 200, ended.body);
    assert.ok(json(ended).sessions_ended >= 2);
    assert.equal(json(ended).links_voided, 1);
    for (const { cookie } of [first, second]) assertEnvelope(await context.app.inject({ url: '/portal/api/account', headers: { cookie } }), 401);
    const late = await context.app.inject({ url: `${unopened.pathname}${unopened.search}` });
    assert.equal(late.headers.location, '/portal#link-expired');
    const log = await context.store.admin.listAudit(100, null);
    assert.ok(log.items.some((item) => item.action === 'accounts.portal-sessions-ended' && item.target === accountId && item.actor === 'website'));
    assertEnvelope(await admin('DELETE', '/admin/accounts/acct_nosuch/portal-sessions'), 404);
  });

  it('a revoked or disabled key signs in to nothing', async () => {
    const extra = await new KeyAdmin(context.store.ledger).createInAccount(accountId, 0, 'temporary');
    assert.equal(extra.outcome, 'created');
    if (extra.outcome !== 'created') return;
    assert.equal((await withKey(extra.key, 'GET', '/portal/api/account')).statusCode, 200);
    await context.store.ledger.setKeyStatus(extra.record.id, 'disabled');
    assertEnvelope(await withKey(extra.key, 'GET', '/portal/api/account'), 403);
    await context.store.ledger.setKeyStatus(extra.record.id, 'revoked');
    assertEnvelope(await withKey(extra.key, 'POST', `/portal/api/keys/${extra.record.id}/roll`, { grace_seconds: 0 }), 403);
  });

  it('concurrent openings of one link: one session, and every other is told the link was used', async () => {
    const { pathname, search } = new URL(json(await admin('POST', `/admin/accounts/${accountId}/portal-sessions`)).url);
    const openings = await Promise.all(Array.from({ length: 6 }, () => context.app.inject({ url: `${pathname}${search}` })));
    const locations = openings.map((opening) => opening.headers.location).sort();
    assert.deepEqual(locations, ['/portal', ...new Array(5).fill('/portal#link-used')]);
  });
});

describe('admin scopes: credits only with credits:write, portal links only with portal:write', () => {
  let context: TestContext;
  const tokenWith = async (...scopes: AdminScope[]) =>
    `Bearer ${(await new AdminTokens(context.store.admin).create(`with ${scopes.join(' ')}`, scopes)).token}`;
  before(async () => {
    context = await createTestApp();
  });
  after(() => context.close());

  const call = (token: string, method: 'POST', url: string, payload?: object) =>
    context.app.inject({ method, url, headers: { authorization: token }, ...(payload && { payload }) });

  it('creating a key or an account with credits needs credits:write, and its 403 says so; without credits it does not', async () => {
    const keys = await tokenWith('keys:write');
    const accounts = await tokenWith('accounts:write');
    assertEnvelope(await call(keys, 'POST', '/admin/keys', { credits: 999_999_999_999 }), 403, /credits:write.*granting credits/);
    assertEnvelope(await call(accounts, 'POST', '/admin/accounts', { name: 'Free money', credits: 5 }), 403, /credits:write/);
    const account = json(await call(accounts, 'POST', '/admin/accounts', { name: 'No credits' }));
    assert.equal(account.balance, 0);
    assertEnvelope(await call(keys, 'POST', `/admin/accounts/${account.id}/keys`, { credits: 5 }), 403, /credits:write/);
    assert.equal((await call(keys, 'POST', `/admin/accounts/${account.id}/keys`, { name: 'no credits' })).statusCode, 201);
    assert.equal((await call(keys, 'POST', '/admin/keys', { credits: 0 })).statusCode, 201);
    assert.equal((await context.store.ledger.findAccount(account.id))?.balance, 0);
    const both = await tokenWith('keys:write', 'credits:write');
    assert.equal((await call(both, 'POST', `/admin/accounts/${account.id}/keys`, { credits: 5 })).statusCode, 201);
    assert.equal((await context.store.ledger.findAccount(account.id))?.balance, 5);
  });

  it('an accounts:write token cannot make a portal link: portal:write can', async () => {
    const created = await new AccountAdmin(context.store.ledger).create({ name: 'Linked' });
    const id = created.outcome === 'created' ? created.account.id : '';
    assertEnvelope(await call(await tokenWith('accounts:write'), 'POST', `/admin/accounts/${id}/portal-sessions`), 403, /portal:write/);
    assert.equal((await call(await tokenWith('portal:write'), 'POST', `/admin/accounts/${id}/portal-sessions`)).statusCode, 201);
  });
});

describe('the customer portal: sign-in throttling and the cookie behind a TLS proxy', () => {
  it('refuses an address with 429 and Retry-After after 10 failed sign-ins a minute; other addresses still sign in', async () => {
    const context = await createTestApp();
    try {
      const key = await context.createKey(1);
      const from = (remoteAddress: string, apiKey: string) =>
        context.app.inject({ url: '/portal/api/account', headers: { 'x-api-key': apiKey }, remoteAddress });
      for (let attempt = 0; attempt < 10; attempt++) assertEnvelope(await from('203.0.113.7', randomKey()), 401);
      const throttled = assertEnvelope(await from('203.0.113.7', randomKey()), 429, /Too many failed portal sign-ins/);
      assert.ok(throttled);
      const again = await from('203.0.113.7', key);
      assert.equal(again.statusCode, 429, 'even the right key waits: the address is throttled');
      assert.ok(Number(again.headers['retry-after']) > 0 && Number(again.headers['retry-after']) <= 60);
      const link = await context.app.inject({ url: '/portal/sign-in?token=guessed', remoteAddress: '203.0.113.7' });
      assert.equal(link.statusCode, 429);
      assert.equal((await from('198.51.100.2', key)).statusCode, 200);
    } finally {
      await context.close();
    }
  });

  const cookieFrom = async (settings: Parameters<typeof createTestApp>[0], headers: Record<string, string> = {}) => {
    const context = await createTestApp(settings);
    try {
      const account = await new AccountAdmin(context.store.ledger).create({ name: 'Cookie' });
      const id = account.outcome === 'created' ? account.account.id : '';
      const token = (await new AdminTokens(context.store.admin).create('website', ['portal:write'])).token;
      const made = await context.app.inject({
        method: 'POST',
        url: `/admin/accounts/${id}/portal-sessions`,
        headers: { authorization: `Bearer ${token}` },
      });
      const { pathname, search } = new URL(json(made).url);
      const opened = await context.app.inject({ url: `${pathname}${search}`, headers });
      return String(opened.headers['set-cookie']);
    } finally {
      await context.close();
    }
  };

  it('sets Secure when PUBLIC_URL is https, or when a trusted proxy says the request came over TLS', async () => {
    const https = { portal: { publicUrl: 'https://api.example.com', checkout: undefined } };
    assert.match(await cookieFrom({ settings: https }), /; Secure$/);
    const forwarded = { 'x-forwarded-proto': 'https' };
    assert.match(await cookieFrom({ settings: { trustProxy: true } }, forwarded), /; Secure$/);
    assert.doesNotMatch(await cookieFrom({ settings: { trustProxy: false } }, forwarded), /Secure/, 'an untrusted header is not believed');
  });
});

function randomKey(): string {
  return randomBytes(32).toString('hex');
}
