import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

/** Accounts through the admin API: keys that share one balance, its grants, plan, caps and usage. Runs on both stores. */
describe('admin API: accounts', () => {
  let context: TestContext;
  let authorization: string;
  const now = Date.parse('2037-05-06T21:00:00.000Z');
  before(async () => {
    context = await createTestApp({ clock: () => now });
    authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('billing', false)).token}`;
  });
  after(async () => context.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = {}) =>
    context.app.inject({ method, url, headers: { authorization, ...headers }, ...(payload && { payload }) });
  const fetchDocument = (key: string) => context.app.inject({ url: '/document', headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' } });
  const balanceOf = async (key: string) => json(await context.app.inject({ url: '/credits', headers: { 'x-api-key': key } })).current_balance;
  let externalIds = 0;
  const newAccount = async (body: object = {}) => {
    const response = await call('POST', '/admin/accounts', { name: 'Acme', external_id: `cus_${++externalIds}`, ...body });
    assert.equal(response.statusCode, 201, response.body);
    return json(response);
  };
  const newKey = async (accountId: string, body: object = {}) => {
    const response = await call('POST', `/admin/accounts/${accountId}/keys`, body);
    assert.equal(response.statusCode, 201, response.body);
    return json(response);
  };

  it('creates an account with its own id, external id and metadata, found by either', async () => {
    const created = await newAccount({ name: 'Acme Research', credits: 40, metadata: { plan: 'pro' } });
    assert.match(created.id, /^acct_[0-9a-f]{16}$/);
    assert.deepEqual(
      { ...created, id: undefined, created_at: undefined },
      {
        id: undefined,
        created_at: undefined,
        name: 'Acme Research',
        external_id: `cus_${externalIds}`,
        metadata: { plan: 'pro' },
        balance: 40,
        prices: null,
        low_balance_threshold: null,
        spend_caps: null,
      },
    );
    const found = json(await call('GET', `/admin/accounts?external_id=cus_${externalIds}`)).accounts;
    assert.deepEqual(
      found.map((account: { id: string }) => account.id),
      [created.id],
    );
    const shown = json(await call('GET', `/admin/accounts/${created.id}`));
    assert.equal(shown.balance, 40);
    assert.deepEqual(shown.keys, []);
    const named = json(await call('GET', '/admin/accounts?name_contains=acme%20RES')).accounts;
    assert.ok(named.some((account: { id: string }) => account.id === created.id));
  });

  it('gives every key of an account its one balance, spent and topped up through any of them', async () => {
    const account = await newAccount({ credits: 5 });
    const production = await newKey(account.id, { name: 'production' });
    const staging = json(await call('POST', '/admin/keys', { credits: 3, name: 'staging', account_id: account.id }));
    assert.equal(staging.account_id, account.id);
    assert.equal(staging.balance, 8, 'the credits of a key created into an account are granted to the account');
    assert.equal((await fetchDocument(production.key)).statusCode, 200);
    assert.equal((await fetchDocument(staging.key)).statusCode, 200);
    assert.equal(await balanceOf(production.key), 6);
    assert.equal(await balanceOf(staging.key), 6);
    assert.deepEqual(json(await call('POST', `/admin/accounts/${account.id}/topup`, { credits: 4 })), { id: account.id, balance: 10 });
    assert.deepEqual(json(await call('POST', `/admin/keys/${production.id}/topup`, { credits: 1 })), { id: production.id, balance: 11 });
    assert.equal(await balanceOf(staging.key), 11);
    const events = json(await call('GET', `/admin/accounts/${account.id}/events`)).events as Array<{ type: string; data: Record<string, unknown> }>;
    assert.deepEqual(
      events.filter((event) => event.type === 'credits.granted').map((event) => [event.data.account_id, event.data.key_id, event.data.credits]),
      [
        [account.id, production.id, 1],
        [account.id, undefined, 4],
        [account.id, staging.id, 3],
      ],
      "the account's own top-up carries no key; a key's, its key",
    );
    assertEnvelope(await call('GET', '/admin/accounts/acct_0000000000000000/events'), 404);
    const shown = json(await call('GET', `/admin/accounts/${account.id}`));
    assert.deepEqual(
      shown.keys.map((key: { id: string; balance: number }) => [key.id, key.balance]),
      [
        [production.id, 11],
        [staging.id, 11],
      ],
    );
    assert.deepEqual(shown.totals_by_endpoint, { '/document': { charges: 2, credits: 2 } });
    const audit = (await context.store.ledger.auditLedger()).find((ledger) => ledger.accountId === account.id);
    assert.deepEqual(audit, { accountId: account.id, granted: 13, charged: 2, expired: 0, balance: 11, consistent: true });
  });

  it('tops an account up once per Idempotency-Key, and refuses a grant past 10^12', async () => {
    const account = await newAccount();
    const first = await call('POST', `/admin/accounts/${account.id}/topup`, { credits: 9, reference: 'inv-1' }, { 'idempotency-key': 'acct-pay-1' });
    const again = await call('POST', `/admin/accounts/${account.id}/topup`, { credits: 9, reference: 'inv-1' }, { 'idempotency-key': 'acct-pay-1' });
    assert.deepEqual(
      [json(first), json(again)],
      [
        { id: account.id, balance: 9 },
        { id: account.id, balance: 9 },
      ],
    );
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assertEnvelope(await call('POST', `/admin/accounts/${account.id}/topup`, { credits: 1_000_000_000_000 }), 422, /would pass 1000000000000/);
    assertEnvelope(
      await call('POST', '/admin/accounts/acct_0000000000000000/topup', { credits: 1 }),
      404,
      /No account has id "acct_0000000000000000"/,
    );
  });

  it("caps what all of an account's keys spend together: 429 naming the account's cap, uncharged", async () => {
    const account = await newAccount({ credits: 20, spend_caps: [{ credits: 3, interval: 'day' }] });
    const one = await newKey(account.id);
    const two = await newKey(account.id);
    assert.equal((await fetchDocument(one.key)).statusCode, 200);
    assert.equal((await fetchDocument(two.key)).statusCode, 200);
    assert.equal((await fetchDocument(one.key)).statusCode, 200);
    const refused = await fetchDocument(two.key);
    assertEnvelope(
      refused,
      429,
      /account has spent 3 of its cap of 3 credits a day; the cap resets at 2037-05-07T00:00:00.000Z\. Nothing was charged/,
    );
    assert.equal(refused.headers['retry-after'], String(3 * 3600));
    assert.equal(refused.headers['x-credits-remaining'], '17');
    const shown = json(await call('GET', `/admin/accounts/${account.id}`));
    assert.equal(shown.balance, 17);
    assert.deepEqual(shown.cap_spend, [{ credits: 3, interval: 'day', spent: 3, resets_at: '2037-05-07T00:00:00.000Z' }]);
    const lifted = json(await call('PATCH', `/admin/accounts/${account.id}`, { spend_caps: null }));
    assert.equal(lifted.spend_caps, null);
    assert.equal((await fetchDocument(two.key)).statusCode, 200, 'the change applies at once on this instance');
    const events = await context.store.webhooks.listEvents(100);
    const reached = events.filter((event) => event.type === 'credits.cap_reached' && event.data.account_id === account.id);
    assert.equal(reached.length, 1, 'sent once');
    assert.equal(reached[0]?.data.holder, 'account');
  });

  it('sets prices, the low-balance mark, name, external id and metadata on the account; every key pays by them', async () => {
    const account = await newAccount({ credits: 10 });
    const key = await newKey(account.id);
    const changed = json(
      await call('PATCH', `/admin/accounts/${account.id}`, {
        name: 'Acme Ltd',
        prices: { '/document': 3 },
        low_balance_threshold: 5,
        metadata: { tier: 2 },
      }),
    );
    assert.deepEqual(
      [changed.name, changed.prices, changed.low_balance_threshold, changed.metadata],
      ['Acme Ltd', { '/document': 3 }, 5, { tier: 2 }],
    );
    const paid = await fetchDocument(key.key);
    assert.equal(paid.headers['x-credits-charged'], '3');
    assert.equal(await balanceOf(key.key), 7);
    assert.equal((await fetchDocument(key.key)).statusCode, 200);
    const events = await context.store.webhooks.listEvents(100);
    const low = events.find((event) => event.type === 'credits.low' && event.data.account_id === account.id);
    assert.deepEqual(low && { key: low.data.key_id, balance: low.data.balance }, { key: key.id, balance: 4 });
    const other = await newAccount();
    assertEnvelope(await call('PATCH', `/admin/accounts/${account.id}`, { external_id: other.external_id }), 409, new RegExp(other.id));
    assertEnvelope(await call('PATCH', `/admin/accounts/${account.id}`, { metadata: { blob: 'x'.repeat(5000) } }), 400, /at most 4096/);
    assertEnvelope(await call('PATCH', `/admin/accounts/${account.id}`, {}), 400);
    assertEnvelope(await call('PATCH', '/admin/accounts/acct_0000000000000000', { name: 'x' }), 404);
    assertEnvelope(await call('POST', '/admin/accounts', { name: 'Dup', external_id: other.external_id }), 409, /external_id/);
  });

  it("sets and ends an account's refill plan, granted at once", async () => {
    const account = await newAccount();
    const set = await call(
      'PUT',
      `/admin/accounts/${account.id}/refill`,
      { credits: 25, interval: 'month', mode: 'add' },
      { 'idempotency-key': 'plan-1' },
    );
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual({ ...json(set), refill: undefined }, { id: account.id, balance: 25, granted: 25, refill: undefined });
    assert.equal(json(set).refill.next_refill_at, '2037-06-06T21:00:00.000Z', 'a month after the plan was set');
    assert.equal(json(await call('GET', `/admin/accounts/${account.id}`)).refill.credits, 25);
    const ended = json(await call('DELETE', `/admin/accounts/${account.id}/refill`));
    assert.deepEqual(ended, { id: account.id, balance: 25, refill: null, granted: 0 });
  });

  it('reports usage by key and endpoint, as JSON and as CSV', async () => {
    const account = await newAccount({ credits: 10 });
    const one = await newKey(account.id);
    const two = await newKey(account.id);
    await fetchDocument(one.key);
    await fetchDocument(one.key);
    await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': two.key }, payload: { query: 'data' } });
    // Charges are stamped by the database's clock, not the service's.
    const iso = (ms: number) => new Date(ms).toISOString();
    const span = `from=${iso(Date.now() - 86_400_000)}&to=${iso(Date.now() + 86_400_000)}`;
    const usage = json(await call('GET', `/admin/accounts/${account.id}/usage?${span}`));
    const expected = [
      { key_id: one.id, endpoint: '/document', charges: 2, credits: 2 },
      { key_id: two.id, endpoint: '/query', charges: 1, credits: 1 },
    ].sort((a, b) => a.key_id.localeCompare(b.key_id));
    assert.deepEqual(usage.by_key, expected);
    assert.equal(usage.totals.count, 3);
    const csv = await call('GET', `/admin/accounts/${account.id}/usage?${span}`, undefined, { accept: 'text/csv' });
    assert.match(csv.headers['content-type'] as string, /^text\/csv/);
    assert.equal(
      csv.body,
      `key_id,endpoint,charges,credits\n${expected.map((row) => `${row.key_id},${row.endpoint},${row.charges},${row.credits}`).join('\n')}\n`,
    );
  });

  it('audits every account change with the account as its target', async () => {
    const account = await newAccount({ credits: 1 });
    await call('POST', `/admin/accounts/${account.id}/topup`, { credits: 2 });
    await call('PATCH', `/admin/accounts/${account.id}`, { name: 'Renamed' });
    const key = await newKey(account.id);
    const log = await context.store.admin.listAudit(1000, null);
    const actions = log.items.filter((entry) => entry.target === account.id).map((entry) => [entry.actor, entry.action]);
    assert.deepEqual(actions.sort(), [
      ['billing', 'accounts.create'],
      ['billing', 'accounts.topup'],
      ['billing', 'accounts.update'],
    ]);
    const created = log.items.find((entry) => entry.target === key.id);
    assert.equal(created?.detail.account_id, account.id);
  });

  it('refuses a key for an unknown account, bad bodies, and a token without the scope', async () => {
    assertEnvelope(await call('POST', '/admin/accounts/acct_0000000000000000/keys', {}), 404);
    assertEnvelope(await call('POST', '/admin/keys', { credits: 1, account_id: 'acct_0000000000000000' }), 404);
    assertEnvelope(await call('POST', '/admin/accounts', {}), 400, /name/);
    assertEnvelope(await call('POST', '/admin/accounts', { name: 'x', credits: -1 }), 400, /credits/);
    assertEnvelope(await call('POST', '/admin/accounts', { name: 'x', external_id: 'a\u0007b' }), 400, /external_id/);
    assertEnvelope(await call('GET', '/admin/accounts?cursor=forged'), 400, /cursor/);
    const reader = (await new AdminTokens(context.store.admin).create('reader', ['keys:read'])).token;
    const refused = await context.app.inject({
      method: 'POST',
      url: '/admin/accounts',
      headers: { authorization: `Bearer ${reader}` },
      payload: { name: 'x' },
    });
    assertEnvelope(refused, 403, /accounts:write/);
    const listed = await context.app.inject({ url: '/admin/accounts', headers: { authorization: `Bearer ${reader}` } });
    assertEnvelope(listed, 403, /accounts:read/);
    assert.equal((await context.app.inject({ url: '/admin/accounts' })).statusCode, 401);
  });
});
