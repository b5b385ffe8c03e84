import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { AccountAdmin } from '../../src/billing/account-admin.js';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { StripeCheckout } from '../../src/billing/stripe-checkout.js';
import { CHROMIUM, CHROMIUM_FLAGS, skipWithoutChromium } from '../support/browser.js';
import { createTestApp, type TestContext } from '../support/helper.js';
import { screenshotDir } from '../support/screenshots.js';
import { startStripeStandIn } from '../support/stripe-stand-in.js';

const SCREENSHOTS = screenshotDir('portal');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const STRIPE_SECRET = 'whsec_portal_browser_5WbX5kEWLlfzsGNjH64I8l';
const PACKS = [
  { id: 'small', credits: 100, price_id: 'price_small', label: '100 credits' },
  { id: 'large', credits: 1000, price_id: 'price_large', label: '1,000 credits' },
];

/** The customer portal in Debian's Chromium against a real listening service, its clock controlled: what a customer sees and does. */
describe('the customer portal in Chromium', { skip: skipWithoutChromium }, () => {
  let context: TestContext;
  let base: string;
  let stripe: Awaited<ReturnType<typeof startStripeStandIn>>;
  let operator: string;
  let now = Date.now();
  const profiles: string[] = [];
  const browsers: BrowserContext[] = [];
  const outside: string[] = [];
  const acme = { id: '', key: '', keyId: '' };
  const globex = { id: '', key: '', keyId: '' };

  async function openBrowser(viewport = DESKTOP): Promise<Page> {
    const profile = mkdtempSync(join(tmpdir(), 'portal-profile-'));
    profiles.push(profile);
    const browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport });
    browsers.push(browser);
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.on('request', (request) => {
      if (!request.url().startsWith(base) && !request.url().startsWith(stripe.url) && !request.url().startsWith('data:')) outside.push(request.url());
    });
    return page;
  }

  async function signInWithKey(page: Page, key: string): Promise<void> {
    await page.goto(`${base}/portal`);
    await page.getByLabel('API key').fill(key);
    await page.getByLabel('API key').press('Enter');
    await page.getByTestId('portal-balance').waitFor();
  }

  const portalLink = async (accountId: string) =>
    (
      (await (
        await fetch(`${base}/admin/accounts/${accountId}/portal-sessions`, { method: 'POST', headers: { authorization: operator } })
      ).json()) as { url: string }
    ).url;
  const shoot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true, animations: 'disabled' });
  const call = (key: string, path = '/credits') => fetch(`${base}${path}`, { headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' } });

  before(async () => {
    stripe = await startStripeStandIn();
    context = await createTestApp({
      clock: () => now,
      checkout: new StripeCheckout('sk_test_browser', PACKS, stripe.url),
      settings: { stripe: { webhookSecret: STRIPE_SECRET, priceCredits: {} } },
    });
    base = await context.app.listen({ port: 0, host: '127.0.0.1' });
    operator = `Bearer ${(await new AdminTokens(context.store.admin).create('website', ['portal:write'])).token}`;
    for (const [holder, name, credits] of [
      [acme, 'Acme Research', 20],
      [globex, 'Globex', 5],
    ] as const) {
      const created = await new AccountAdmin(context.store.ledger).create({ name, credits });
      holder.id = created.outcome === 'created' ? created.account.id : '';
      const key = await new KeyAdmin(context.store.ledger).createInAccount(holder.id, 0, `${name} production`);
      if (key.outcome === 'created') Object.assign(holder, { key: key.key, keyId: key.record.id });
    }
  });
  after(async () => {
    for (const browser of browsers) await browser.close();
    await context.close();
    await stripe.close();
    for (const profile of profiles) rmSync(profile, { recursive: true, force: true });
    assert.deepEqual(outside, [], 'nothing loaded from another host');
  });

  it("signs in with an API key kept for the tab, never in the URL, and shows the balance and today's usage move with traffic", async () => {
    const page = await openBrowser();
    await page.goto(`${base}/portal`);
    await shoot(page, 'sign-in');
    await signInWithKey(page, acme.key);
    await page.getByTestId('portal-balance').filter({ hasText: '20' }).waitFor();
    assert.equal((await call(acme.key, '/document')).status, 200);
    assert.equal((await call(acme.key, '/document')).status, 200);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByTestId('portal-balance').filter({ hasText: '18' }).waitFor();
    await page.getByTestId('portal-today').filter({ hasText: '2' }).waitFor();
    await page.getByTestId('portal-usage').getByRole('cell', { name: '/document' }).waitFor();
    assert.ok(!page.url().includes(acme.key), 'the key is never in the URL');
    const text = (await page.textContent('body')) ?? '';
    assert.ok(!text.includes(globex.id) && !text.includes('Globex'), "no other account's data");
    await shoot(page, 'account');
  });

  it('signs in with a portal link once; a used or an expired link says so and opens nothing', async () => {
    const link = await portalLink(acme.id);
    const page = await openBrowser();
    await page.goto(link);
    await page.getByTestId('portal-balance').waitFor();
    assert.equal(new URL(page.url()).pathname, '/portal', 'the token leaves the address bar');
    const cookies = await page.context().cookies();
    assert.deepEqual(
      cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite]),
      [['ms_portal', true, 'Strict']],
    );
    const second = await openBrowser();
    await second.goto(link);
    await second.getByRole('alert').filter({ hasText: 'used already' }).waitFor();
    assert.equal(await second.getByTestId('portal-balance').count(), 0);
    const late = await portalLink(acme.id);
    now += 16 * 60_000;
    await second.goto(late);
    await second.getByRole('alert').filter({ hasText: 'expired' }).waitFor();
    await shoot(second, 'link-expired');
  });

  it('refuses a cross-site request made with the session cookie', async () => {
    const page = await openBrowser();
    await page.goto(await portalLink(acme.id));
    await page.getByTestId('portal-balance').waitFor();
    const checkouts = stripe.checkouts.length;
    await page.goto(`${stripe.url}/pay/elsewhere`);
    await page.evaluate(async (url) => {
      await fetch(`${url}/portal/api/checkout`, {
        method: 'POST',
        mode: 'no-cors',
        credentials: 'include',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ pack_id: 'large' }),
      });
    }, base);
    assert.equal(stripe.checkouts.length, checkouts, 'no checkout was made');
  });

  it('rolls a key after a confirmation: the new key is shown once, the old one works through the grace period only', async () => {
    const page = await openBrowser();
    await signInWithKey(page, acme.key);
    await page.getByRole('button', { name: 'Roll Acme Research production' }).click();
    await page.getByRole('dialog').getByLabel('The current key keeps working for').selectOption('3600');
    await page.getByRole('dialog').getByRole('button', { name: 'Roll' }).click();
    const fresh = await page.getByRole('textbox', { name: 'The new key for "Acme Research production"' }).inputValue();
    assert.match(fresh, /^[0-9a-f]{64}$/);
    assert.equal((await call(acme.key)).status, 200, 'the former key works through its grace period');
    now += 3601_000;
    assert.equal((await call(acme.key)).status, 401, 'and not after it');
    assert.equal((await call(fresh)).status, 200);
    acme.key = fresh;
    // The tab was signed in with the key it rolled: it now uses the new one.
    await page.getByLabel('New name for Acme Research production').fill('Acme live');
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('status').filter({ hasText: 'Named "Acme live".' }).waitFor();
  });

  it("offers to change only the key it was signed in with; a portal link's session changes every key", async () => {
    const staging = await new KeyAdmin(context.store.ledger).createInAccount(acme.id, 0, 'Acme staging');
    assert.equal(staging.outcome, 'created');
    const byKey = await openBrowser();
    await signInWithKey(byKey, staging.outcome === 'created' ? staging.key : '');
    await byKey.getByRole('button', { name: 'Roll Acme staging' }).waitFor();
    assert.equal(await byKey.getByRole('button', { name: /^Roll Acme live/ }).count(), 0, 'no button for another key');
    await byKey.getByText("Sign in with this key, or through your provider's website, to change it.").waitFor();
    await shoot(byKey, 'account-key-session');
    const bySession = await openBrowser();
    await bySession.goto(await portalLink(acme.id));
    await bySession.getByRole('button', { name: 'Roll Acme staging' }).waitFor();
    assert.equal(await bySession.getByRole('button', { name: 'Roll Acme live' }).count(), 1);
  });

  it('buys a pack through Stripe Checkout: the stand-in gets the session, a signed event credits the account once', async () => {
    const page = await openBrowser();
    await signInWithKey(page, acme.key);
    const before = (await context.store.ledger.findAccount(acme.id))!.balance;
    await page.getByRole('button', { name: 'Buy 1,000 credits' }).click();
    await page.getByRole('heading', { name: 'Stand-in checkout' }).waitFor();
    assert.match(page.url(), new RegExp(`^${stripe.url}/pay/cs_test_\\d+$`));
    const sent = stripe.checkouts.at(-1)!;
    assert.deepEqual(
      [sent.form.mode, sent.form['line_items[0][price]'], sent.form.client_reference_id, sent.form['metadata[credits]']],
      ['payment', 'price_large', acme.id, '1000'],
    );
    const event = JSON.stringify({
      id: 'evt_browser_1',
      object: 'event',
      type: 'checkout.session.completed',
      data: { object: { object: 'checkout.session', payment_status: 'paid', client_reference_id: acme.id, metadata: { credits: '1000' } } },
    });
    const deliver = async () => {
      const at = Math.floor(now / 1000);
      const signature = `t=${at},v1=${createHmac('sha256', STRIPE_SECRET).update(`${at}.${event}`).digest('hex')}`;
      const response = await fetch(`${base}/billing/stripe/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
        body: event,
      });
      return ((await response.json()) as { outcome: string }).outcome;
    };
    assert.equal(await deliver(), 'credited');
    assert.equal(await deliver(), 'duplicate');
    await page.goto(`${base}/portal#bought`);
    await page
      .getByTestId('portal-balance')
      .filter({ hasText: formatted(before + 1000) })
      .waitFor();
    await page.getByRole('status').filter({ hasText: 'your credits arrive' }).waitFor();
  });

  it('works from the keyboard and fits a phone screen', async () => {
    const page = await openBrowser(PHONE);
    await page.goto(`${base}/portal`);
    await page.getByLabel('API key').waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name), 'key');
    await page.keyboard.type(globex.key);
    await page.keyboard.press('Enter');
    await page.getByTestId('portal-balance').filter({ hasText: '5' }).waitFor();
    const text = (await page.textContent('body')) ?? '';
    assert.ok(!text.includes(acme.id) && !text.includes('Acme'), "no other account's data");
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width, 'no sideways scrolling');
    await shoot(page, 'account-phone');
  });
});

function formatted(value: number): string {
  return new Intl.NumberFormat('en').format(value);
}
