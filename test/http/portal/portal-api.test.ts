import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { AccountAdmin } from '../../../src/billing/account-admin.js';
import { KeyAdmin } from '../../../src/billing/key-admin.js';
import { StripeCheckout } from '../../../src/billing/stripe-checkout.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';
import { startStripeStandIn } from '../../support/stripe-stand-in.js';

const STRIPE_SECRET = 'whsec_portal_5WbX5kEWLlfzsGNjH64I8lOOqUB6';
const PACKS = [
  { id: 'small', credits: 100, price_id: 'price_small', label: '100 credits' },
  { id: 'large', credits: 1000, price_id: 'price_large', label: '1,000 credits' },
];

/** The portal's API over app.inject: sign-in both ways, each account seeing only its own, CSRF, and a purchase through a stand-in Stripe. Runs on both stores. */
describe('the customer portal API', () => {
  let context: TestContext;
  let stripe: Awaited<ReturnType<typeof startStripeStandIn>>;
  let operator: string;
  // Near the real time: charges are stamped by the database's clock, and usage spans follow the service's.
  let now = Date.now();
  const accounts: Array<{ id: string; key: string; keyId: string }> = [];

  before(async () => {
    stripe = await startStripeStandIn();
    context = await createTestApp({
      clock: () => now,
      checkout: new StripeCheckout('sk_test_portal', PACKS, stripe.url),
      settings: { stripe: { webhookSecret: STRIPE_SECRET, priceCredits: {} } },
    });
    operator = `Bearer ${(await new AdminTokens(context.store.admin).create('website', ['portal:write', 'accounts:read'])).token}`;
    for (const name of ['Acme', 'Globex']) {
      const created = await new AccountAdmin(context.store.ledger).create({ name, credits: 20 });
      const id = created.outcome === 'created' ? created.account.id : '';
      const key = await new KeyAdmin(context.store.ledger).createInAccount(id, 0, `${name} production`);
      assert.equal(key.outcome, 'created');
      if (key.outcome === 'created') accounts.push({ id, key: key.key, keyId: key.record.id });
    }
  });
  after(async () => {
    await context.close();
    await stripe.close();
  });

  const withKey = (key: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    context.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload && { payload }) });
  const link = async (accountId: string) =>
    json(await context.app.inject({ method: 'POST', url: `/admin/accounts/${accountId}/portal-sessions`, headers: { authorization: operator } }));
  const signIn = async (url: string) => {
    const { pathname, search } = new URL(url);
    return context.app.inject({ url: `${pathname}${search}` });
  };
  const cookieOf = (response: { headers: Record<string, unknown> }) => String(response.headers['set-cookie']).split(';')[0] as string;

  it('shows the signed-in account only: balance, keys, usage and charges, by API key', async () => {
    const [acme, globex] = accounts as [(typeof accounts)[number], (typeof accounts)[number]];
    assert.equal((await context.app.inject({ url: '/document', headers: { 'x-api-key': acme.key, 'svc-doc-id': 'gdpr-17' } })).statusCode, 200);
    const response = await withKey(acme.key, 'GET', '/portal/api/account');
    assert.equal(response.statusCode, 200, response.body);
    const view = json(response);
    assert.deepEqual([view.account.id, view.account.balance], [acme.id, 19]);
    assert.deepEqual(
      view.keys.map((key: { id: string }) => key.id),
      [acme.keyId],
    );
    assert.equal(view.keys[0].last_used_at !== null, true);
    assert.deepEqual(
      view.charges.map((charge: { endpoint: string; key_id: string }) => [charge.endpoint, charge.key_id]),
      [['/document', acme.keyId]],
    );
    assert.deepEqual(view.usage.by_key, [{ key_id: acme.keyId, endpoint: '/document', charges: 1, credits: 1 }]);
    assert.deepEqual(
      view.packs.map((pack: { id: string }) => pack.id),
      ['small', 'large'],
    );
    assert.ok(!response.body.includes(globex.id) && !response.body.includes(globex.keyId), "never another account's data");
  });

  it('refuses a key in a URL, an unknown key, and no sign-in at all', async () => {
    const [acme] = accounts as [(typeof accounts)[number]];
    assertEnvelope(await context.app.inject({ url: `/portal/api/account?api_key=${acme.key}` }), 400, /x-api-key header, never in a URL/);
    assertEnvelope(await withKey('ab'.repeat(32), 'GET', '/portal/api/account'), 401);
    assertEnvelope(await context.app.inject({ url: '/portal/api/account' }), 401, /Sign in to the portal/);
  });

  it('opens a cookie session from a portal link once; a used or expired link opens nothing', async () => {
    const [acme] = accounts as [(typeof accounts)[number]];
    const made = await link(acme.id);
    assert.match(made.url, /\/portal\/sign-in\?token=[A-Za-z0-9_-]{43}$/);
    assert.equal(made.expires_at, new Date(now + 15 * 60_000).toISOString());
    const opened = await signIn(made.url);
    assert.equal(opened.statusCode, 303);
    assert.equal(opened.headers.location, '/portal');
    const setCookie = String(opened.headers['set-cookie']);
    assert.match(setCookie, /^ms_portal=[A-Za-z0-9_-]+; Path=\/portal; HttpOnly; SameSite=Strict; Max-Age=28800$/);
    const view = json(await context.app.inject({ url: '/portal/api/account', headers: { cookie: cookieOf(opened) } }));
    assert.deepEqual([view.account.id, view.signed_in_with], [acme.id, 'session']);
    assert.match(view.csrf_token, /^[A-Za-z0-9_-]{32}$/);

    const again = await signIn(made.url);
    assert.deepEqual([again.statusCode, again.headers.location, again.headers['set-cookie']], [303, '/portal#link-used', undefined]);
    const late = await link(acme.id);
    now += 16 * 60_000;
    assert.equal((await signIn(late.url)).headers.location, '/portal#link-expired');
    assert.equal((await context.app.inject({ url: '/portal/sign-in?token=nonsense' })).headers.location, '/portal#link-unknown');
    const log = await context.store.admin.listAudit(100, null);
    const website = (await context.store.admin.listTokens()).find((token) => token.name === 'website')!;
    assert.ok(
      log.items.some((entry) => entry.actor === `portal:${acme.id} (link of admin token ${website.id})` && entry.action === 'portal.sign-in'),
    );
  });

  it("refuses a session's write without its CSRF token, as a cross-site form would send it", async () => {
    const [acme] = accounts as [(typeof accounts)[number]];
    const opened = await signIn((await link(acme.id)).url);
    const cookie = cookieOf(opened);
    const csrf = json(await context.app.inject({ url: '/portal/api/account', headers: { cookie } })).csrf_token;
    const forged = await context.app.inject({
      method: 'PATCH',
      url: `/portal/api/keys/${acme.keyId}`,
      headers: { cookie, origin: 'https://evil.example' },
      payload: { name: 'pwned' },
    });
    assertEnvelope(forged, 403, /x-csrf-token/);
    const renamed = await context.app.inject({
      method: 'PATCH',
      url: `/portal/api/keys/${acme.keyId}`,
      headers: { cookie, 'x-csrf-token': csrf },
      payload: { name: 'Acme live' },
    });
    assert.deepEqual(json(renamed), { id: acme.keyId, name: 'Acme live' });
    const signedOut = await context.app.inject({ method: 'POST', url: '/portal/api/sign-out', headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(signedOut.statusCode, 200);
    assertEnvelope(await context.app.inject({ url: '/portal/api/account', headers: { cookie } }), 401);
  });

  it("rolls and names only the account's own keys, audited as the account", async () => {
    const [acme, globex] = accounts as [(typeof accounts)[number], (typeof accounts)[number]];
    assertEnvelope(await withKey(acme.key, 'POST', `/portal/api/keys/${globex.keyId}/roll`, { grace_seconds: 60 }), 404);
    assertEnvelope(await withKey(acme.key, 'PATCH', `/portal/api/keys/${globex.keyId}`, { name: 'x' }), 404);
    const rolled = json(await withKey(acme.key, 'POST', `/portal/api/keys/${acme.keyId}/roll`, { grace_seconds: 60 }));
    assert.match(rolled.key, /^[0-9a-f]{64}$/);
    assert.equal(rolled.old_key_valid_until, new Date(now + 60_000).toISOString());
    const credits = (key: string) => context.app.inject({ url: '/credits', headers: { 'x-api-key': key } });
    assert.equal((await credits(acme.key)).statusCode, 200, 'the former key answers API calls through its grace period');
    assertEnvelope(await withKey(acme.key, 'GET', '/portal/api/account'), 401, /rolled.*never signs in to the portal/);
    assertEnvelope(await withKey(acme.key, 'POST', `/portal/api/keys/${acme.keyId}/roll`, { grace_seconds: 0 }), 401, /rolled/);
    assert.equal((await credits(rolled.key)).statusCode, 200, "the former key took nothing: the owner's new key works");
    now += 61_000;
    assert.equal((await credits(acme.key)).statusCode, 401, 'and not after it');
    acme.key = rolled.key;
    const log = await context.store.admin.listAudit(100, null);
    assert.ok(
      log.items.some(
        (entry) => entry.actor === `portal:${acme.id} (key ${acme.keyId})` && entry.action === 'keys.roll' && entry.target === acme.keyId,
      ),
    );
  });

  it('buys a pack: a Stripe Checkout Session naming the account and the credits; the signed webhook credits it once', async () => {
    const [acme] = accounts as [(typeof accounts)[number]];
    const before = (await context.store.ledger.findAccount(acme.id))!.balance;
    const bought = await withKey(acme.key, 'POST', '/portal/api/checkout', { pack_id: 'large' });
    assert.equal(bought.statusCode, 200, bought.body);
    assert.match(json(bought).url, new RegExp(`^${stripe.url}/pay/cs_test_\\d+$`));
    const sent = stripe.checkouts.at(-1)!;
    assert.equal(sent.authorization, 'Bearer sk_test_portal');
    assert.equal(sent.form.mode, 'payment');
    assert.equal(sent.form['line_items[0][price]'], 'price_large');
    assert.equal(sent.form['line_items[0][quantity]'], '1');
    assert.equal(sent.form.client_reference_id, acme.id);
    assert.equal(sent.form['metadata[credits]'], '1000');
    assert.match(sent.form.success_url as string, /\/portal#bought$/);
    assert.match(sent.form.cancel_url as string, /\/portal#buy$/);

    const event = JSON.stringify({
      id: 'evt_portal_1',
      object: 'event',
      type: 'checkout.session.completed',
      data: {
        object: { object: 'checkout.session', id: 'cs_test_1', payment_status: 'paid', client_reference_id: acme.id, metadata: { credits: '1000' } },
      },
    });
    const deliver = () => {
      const at = Math.floor(now / 1000);
      const signature = `t=${at},v1=${createHmac('sha256', STRIPE_SECRET).update(`${at}.${event}`).digest('hex')}`;
      return context.app.inject({
        method: 'POST',
        url: '/billing/stripe/webhook',
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
        payload: event,
      });
    };
    assert.equal(json(await deliver()).outcome, 'credited');
    assert.equal(json(await deliver()).outcome, 'duplicate', 'a replayed event changes nothing');
    assert.equal((await context.store.ledger.findAccount(acme.id))!.balance, before + 1000);

    assertEnvelope(await withKey(acme.key, 'POST', '/portal/api/checkout', { pack_id: 'huge' }), 404, /No credit pack/);
    stripe.failNext();
    assertEnvelope(await withKey(acme.key, 'POST', '/portal/api/checkout', { pack_id: 'small' }), 502, /Nothing was charged/);
  });

  it("serves its page with the console's content security policy", async () => {
    const page = await context.app.inject({ url: '/portal' });
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-security-policy'] as string, /default-src 'none'; script-src 'self'/);
  });
});

describe('the customer portal API without Stripe', () => {
  it('offers no pack and says how to get credits; a checkout is 404', async () => {
    const context = await createTestApp();
    try {
      const key = await context.createKey(3);
      const view = json(await context.app.inject({ url: '/portal/api/account', headers: { 'x-api-key': key } }));
      assert.deepEqual(view.packs, []);
      assert.match(view.how_to_buy, /ask the operator/);
      assertEnvelope(
        await context.app.inject({ method: 'POST', url: '/portal/api/checkout', headers: { 'x-api-key': key }, payload: { pack_id: 'small' } }),
        404,
      );
    } finally {
      await context.close();
    }
  });
});
