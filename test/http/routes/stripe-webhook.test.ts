import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { ownAccountId } from '../../../src/billing/accounts.js';
import { KeyAdmin } from '../../../src/billing/key-admin.js';
import { StripeCheckout } from '../../../src/billing/stripe-checkout.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

const SECRET = 'whsec_test_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH';
const NOW = Date.parse('2026-03-01T12:00:00.000Z');

/** A Stripe-Signature header as Stripe's documentation describes it. */
function signature(body: string, secret = SECRET, at = NOW / 1000): string {
  return `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`;
}

function checkoutEvent(id: string, session: Record<string, unknown>, type = 'checkout.session.completed'): string {
  return JSON.stringify({ id, object: 'event', type, data: { object: { object: 'checkout.session', payment_status: 'paid', ...session } } });
}

describe('POST /billing/stripe/webhook', () => {
  let context: TestContext;
  let keyId: string;
  before(async () => {
    context = await createTestApp({
      clock: () => NOW,
      settings: { stripe: { webhookSecret: SECRET, priceCredits: { price_basic: 100, price_pro: 1000 } } },
    });
    keyId = (await new KeyAdmin(context.store.ledger).create(5, 'customer')).record.id;
  });
  after(async () => context.close());

  const deliver = (body: string, header: string | null = signature(body)) =>
    context.app.inject({
      method: 'POST',
      url: '/billing/stripe/webhook',
      headers: { 'content-type': 'application/json', ...(header === null ? {} : { 'stripe-signature': header }) },
      payload: body,
    });
  const balance = async () => (await context.store.ledger.findKeyById(keyId))!.balance;

  it('tops up the key of a paid checkout with metadata.credits, exactly once per event id', async () => {
    const body = checkoutEvent('evt_paid_1', { client_reference_id: keyId, metadata: { credits: '250' } });
    const before = await balance();
    assert.deepEqual(json(await deliver(body)), { received: true, outcome: 'credited' });
    assert.equal(await balance(), before + 250);
    // Stripe retries, and re-sends with a new timestamp and signature: still the one grant.
    assert.deepEqual(json(await deliver(body, signature(body, SECRET, NOW / 1000 - 60))), { received: true, outcome: 'duplicate' });
    assert.equal(await balance(), before + 250);
    const grants = await context.store.ledger.listGrants(ownAccountId(keyId));
    assert.equal(grants.filter((grant) => grant.reason === 'topup').length, 1);
  });

  it('takes the credits from STRIPE_PRICE_CREDITS by the expanded line items, times their quantity', async () => {
    const before = await balance();
    const body = checkoutEvent('evt_priced', {
      client_reference_id: keyId,
      line_items: {
        data: [
          { price: { id: 'price_basic' }, quantity: 2 },
          { price: { id: 'price_pro' }, quantity: 1 },
        ],
      },
    });
    assert.equal(json(await deliver(body)).outcome, 'credited');
    assert.equal(await balance(), before + 1200);
  });

  it('refuses a missing, tampered, foreign or stale signature with 400, crediting nothing', async () => {
    const body = checkoutEvent('evt_forged', { client_reference_id: keyId, metadata: { credits: '999' } });
    const before = await balance();
    assertEnvelope(await deliver(body, null), 400, /Stripe-Signature header is missing/);
    assertEnvelope(await deliver(body.replace('999', '9999'), signature(body)), 400, /No v1 signature/);
    assertEnvelope(await deliver(body, signature(body, 'whsec_someone_else')), 400, /No v1 signature/);
    assertEnvelope(await deliver(body, signature(body, SECRET, NOW / 1000 - 301)), 400, /more than 300 s/);
    assertEnvelope(await deliver(body, 'v1=abc'), 400, /t=<unix time>/);
    // Verified over the bytes sent: the same JSON re-serialised is another body.
    const spaced = JSON.stringify(JSON.parse(body), null, 1);
    assertEnvelope(await deliver(spaced, signature(body)), 400);
    assert.equal(await balance(), before);
  });

  it('accepts any matching v1 among several (a secret being rolled)', async () => {
    const body = checkoutEvent('evt_two_secrets', { client_reference_id: keyId, metadata: { credits: '1' } });
    const old = signature(body, 'whsec_old').split(',')[1];
    assert.equal(json(await deliver(body, `${signature(body)},${old}`)).outcome, 'credited');
  });

  it('answers 200 to other events and unpaid sessions, crediting nothing', async () => {
    const before = await balance();
    const other = JSON.stringify({ id: 'evt_other', type: 'invoice.paid', data: { object: {} } });
    assert.equal(json(await deliver(other)).outcome, 'ignored');
    const unpaid = checkoutEvent('evt_unpaid', { client_reference_id: keyId, payment_status: 'unpaid', metadata: { credits: '5' } });
    assert.equal(json(await deliver(unpaid)).outcome, 'ignored');
    assert.equal(await balance(), before);
  });

  it('answers 200 to a checkout for an unknown key or without credits, and records it in the audit log', async () => {
    const unknown = checkoutEvent('evt_unknown_key', { client_reference_id: 'key_0000000000000000', metadata: { credits: '10' } });
    assert.equal(json(await deliver(unknown)).outcome, 'unknown-key');
    const vague = checkoutEvent('evt_no_credits', { client_reference_id: keyId, metadata: { price_id: 'price_unknown' } });
    assert.equal(json(await deliver(vague)).outcome, 'no-credits-stated');
    const { token } = await new AdminTokens(context.store.admin).create('auditor', true);
    const log = json(await context.app.inject({ url: '/admin/audit-log?limit=10', headers: { authorization: `Bearer ${token}` } }));
    const notes = log.entries.filter((entry: { action: string }) => entry.action === 'billing.stripe.not-credited');
    assert.deepEqual(
      notes.map((entry: { actor: string; target: string; detail: { event_id: string } }) => [entry.actor, entry.target, entry.detail.event_id]),
      [
        ['stripe', keyId, 'evt_no_credits'],
        ['stripe', 'key_0000000000000000', 'evt_unknown_key'],
      ],
    );
  });

  it('never writes a client_reference_id that is not a key id to the audit log, and says why metadata.credits was refused', async () => {
    const nul = checkoutEvent('evt_nul_reference', { client_reference_id: 'key_\u0000', metadata: { credits: '10' } });
    assert.deepEqual([(await deliver(nul)).statusCode, json(await deliver(nul)).outcome], [200, 'unknown-key'], 'answered, so Stripe stops');
    const plainKey = 'ab'.repeat(32);
    const leaked = checkoutEvent('evt_plain_key', { client_reference_id: plainKey, metadata: { credits: '10' } });
    assert.equal(json(await deliver(leaked)).outcome, 'unknown-key');
    const refused: Array<[string, unknown, RegExp]> = [
      ['evt_negative', '-50', /"-50": it is negative/],
      ['evt_fraction', '1.5', /"1.5": it is not a whole number/],
      ['evt_exponent', '1e15', /"1e15": it must be written in decimal digits only/],
      ['evt_hex', '0x10', /"0x10": it must be written in decimal digits only/],
      ['evt_zero', '0', /at least 1 credit/],
      ['evt_huge', '2000000000000', /more than one grant may add/],
    ];
    for (const [id, credits] of refused) {
      assert.equal(json(await deliver(checkoutEvent(id, { client_reference_id: keyId, metadata: { credits } }))).outcome, 'no-credits-stated');
    }
    const { token } = await new AdminTokens(context.store.admin).create('reader', true);
    const page = await context.app.inject({ url: '/admin/audit-log?limit=50', headers: { authorization: `Bearer ${token}` } });
    assert.equal(page.body.includes(plainKey), false, 'the plain key is nowhere in the audit log');
    const notes = json(page).entries as Array<{ target: string; detail: { event_id: string; why: string } }>;
    assert.match(notes.find((entry) => entry.detail.event_id === 'evt_plain_key')?.target ?? '', /^sha256:[0-9a-f]{16}$/);
    for (const [id, , why] of refused) assert.match(notes.find((entry) => entry.detail.event_id === id)?.detail.why ?? '', why, id);
  });

  it('refuses a body that is not a Stripe event, even when signed (400)', async () => {
    assertEnvelope(await deliver('{"hello":"world"}'), 400, /not a Stripe event/);
  });
});

describe('POST /billing/stripe/webhook without STRIPE_WEBHOOK_SECRET', () => {
  it('is not served (404)', async () => {
    const context = await createTestApp();
    try {
      assertEnvelope(await context.app.inject({ method: 'POST', url: '/billing/stripe/webhook', payload: {} }), 404);
    } finally {
      await context.close();
    }
  });
});

describe('POST /billing/stripe/webhook: once per checkout session, and packs decide their credits', () => {
  let context: TestContext;
  let accountId: string;
  const PACKS = [{ id: 'small', credits: 100, price_id: 'price_small', label: '100 credits' }];
  before(async () => {
    context = await createTestApp({
      clock: () => NOW,
      checkout: new StripeCheckout('sk_test_packs', PACKS, 'http://127.0.0.1:9'),
      settings: { stripe: { webhookSecret: SECRET, priceCredits: {} } },
    });
    accountId = (await new KeyAdmin(context.store.ledger).create(0, 'buyer')).record.accountId;
  });
  after(async () => context.close());

  const deliver = (body: string) =>
    context.app.inject({
      method: 'POST',
      url: '/billing/stripe/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature(body) },
      payload: body,
    });
  const balance = async () => (await context.store.ledger.findAccount(accountId))!.balance;

  it('credits a session once when both its completed and its async_payment_succeeded events say paid', async () => {
    const session = { id: 'cs_twice', client_reference_id: accountId, metadata: { credits: '100', pack_id: 'small' } };
    const before = await balance();
    assert.equal(json(await deliver(checkoutEvent('evt_completed', session))).outcome, 'credited');
    assert.equal(json(await deliver(checkoutEvent('evt_async', session, 'checkout.session.async_payment_succeeded'))).outcome, 'duplicate');
    assert.equal(await balance(), before + 100);
  });

  it("takes a pack's credits from the pack; an unknown pack, or credits that disagree with it, credit nothing and are audited", async () => {
    const before = await balance();
    const packOnly = checkoutEvent('evt_pack', { id: 'cs_pack', client_reference_id: accountId, metadata: { pack_id: 'small' } });
    assert.equal(json(await deliver(packOnly)).outcome, 'credited');
    assert.equal(await balance(), before + 100);
    const inflated = checkoutEvent('evt_inflated', {
      id: 'cs_inflated',
      client_reference_id: accountId,
      metadata: { pack_id: 'small', credits: '100000' },
    });
    const unknown = checkoutEvent('evt_unknown', { id: 'cs_unknown', client_reference_id: accountId, metadata: { pack_id: 'huge', credits: '5' } });
    assert.equal(json(await deliver(inflated)).outcome, 'pack-mismatch');
    assert.equal(json(await deliver(unknown)).outcome, 'pack-mismatch');
    assert.equal(await balance(), before + 100);
    const log = await context.store.admin.listAudit(50, null);
    const notCredited = log.items.filter((entry) => entry.action === 'billing.stripe.not-credited').map((entry) => entry.detail?.why);
    assert.ok(
      notCredited.some((why) => /not the 100 of pack "small"/.test(String(why))),
      JSON.stringify(notCredited),
    );
    assert.ok(notCredited.some((why) => /"huge" is not a credit pack/.test(String(why))));
  });
});
