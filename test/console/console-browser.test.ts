import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { request } from 'undici';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { CHROMIUM, CHROMIUM_FLAGS, skipWithoutChromium } from '../support/browser.js';
import { eventually, tempDir } from '../support/helper.js';
import { screenshotDir } from '../support/screenshots.js';

const SCREENSHOTS = screenshotDir('console');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** How long a figure a page fetches may take to show on a loaded CI machine. */
const PAGE_LOAD_MS = 15_000;
const CORPUS = [
  { doc_id: 'law-1', title: 'Data breach notification', text: 'A controller notifies the authority of a personal data breach.' },
  { doc_id: 'law-2', title: 'Right to erasure', text: 'The data subject may ask for the erasure of personal data.' },
  { doc_id: 'law-3', title: 'Consumer privacy', text: 'Consumers may opt out of the sale of personal information.' },
];

/** The operator console in Debian's Chromium, against a real server: what an operator sees and does. */
describe('the operator console in Chromium', {
  skip: skipWithoutChromium,
}, () => {
  const dir = tempDir();
  const profiles: string[] = [];
  let server: RunningServer;
  let writeToken: string;
  let readToken: string;
  let billingToken: string;
  let accountsToken: string;
  const contexts: BrowserContext[] = [];
  const outside: string[] = [];

  /** A fresh browser profile, as a new operator's. */
  async function openBrowser(viewport = DESKTOP): Promise<Page> {
    const profile = mkdtempSync(join(tmpdir(), 'console-profile-'));
    profiles.push(profile);
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport });
    contexts.push(context);
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) outside.push(request.url());
    });
    return page;
  }

  async function signIn(page: Page, token: string): Promise<void> {
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  }

  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
  const shoot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true, animations: 'disabled' });

  before(async () => {
    const store = new SqliteStore(dir.path);
    const tokens = new AdminTokens(store.admin);
    writeToken = (await tokens.create('operator', false)).token;
    readToken = (await tokens.create('analyst', true)).token;
    billingToken = (await tokens.create('billing', ['keys:read', 'credits:write'])).token;
    accountsToken = (await tokens.create('sign-ups', ['accounts:read', 'accounts:write'])).token;
    await store.close();
    server = await startServer(
      loadConfig({ DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1', SEED_DEMO: 'false', LOG_LEVEL: 'silent', FACE_WORKERS: '0' }),
    );
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await server?.close();
    for (const profile of profiles) rmSync(profile, { recursive: true, force: true });
    dir.remove();
  });

  it('refuses a wrong token with the reason, and signs in with a good one', async () => {
    const page = await openBrowser();
    await page.goto(`${server.url}/console`);
    await shoot(page, 'sign-in');
    await page.getByLabel('Admin token').fill(`msadmin_${'0'.repeat(64)}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The admin token is not recognised, or was revoked.' }).waitFor();
    await page.getByLabel('Admin token').fill(writeToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.length), 0, 'the token is not kept beyond the browser session');
  });

  it('shows the not-found page for a route that is not valid percent-encoding, not a blank page', async () => {
    const page = await openBrowser();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await signIn(page, writeToken);
    await page.goto(`${server.url}/console#/keys/%E0%A4%A`);
    await page.getByRole('heading', { level: 1, name: 'No such page' }).waitFor();
    assert.deepEqual(errors, []);
  });

  it('adds documents from a JSON lines file, looks one up and deletes it', async () => {
    const page = await openBrowser();
    await signIn(page, writeToken);
    await nav(page, 'Documents').click();
    await page.getByTestId('document-count').filter({ hasText: '0' }).waitFor();
    const jsonLines = `${CORPUS.map((document) => JSON.stringify(document)).join('\n')}\n`;
    await page.getByLabel('JSON lines file').setInputFiles({ name: 'laws.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(jsonLines) });
    await page.getByRole('button', { name: 'Add documents' }).click();
    await page.getByRole('status').filter({ hasText: 'Added 3 documents from laws.jsonl.' }).waitFor();
    await page.getByTestId('document-count').filter({ hasText: '3' }).waitFor();

    await page.getByLabel('Document id').fill('no-such-document');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('alert').filter({ hasText: 'no-such-document' }).waitFor();
    await page.getByLabel('Document id').fill('law-3');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { name: 'Consumer privacy' }).waitFor();
    await shoot(page, 'documents');
    await page.getByRole('button', { name: 'Delete this document' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted "law-3".' }).waitFor();
    await page.getByTestId('document-count').filter({ hasText: '2' }).waitFor();
  });

  it('searches the corpus as callers do, showing highlights as text, never as markup a document planted', async () => {
    const planted = { doc_id: 'planted-1', title: '<img src=x onerror="window.pwned=1"> data breach', text: 'A <b>breach</b> & more.', kind: 'test' };
    const ingested = await request(`${server.url}/admin/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${writeToken}`, 'content-type': 'application/json' },
      body: JSON.stringify([planted]),
    });
    assert.equal(ingested.statusCode, 200, await ingested.body.text());
    const page = await openBrowser();
    await signIn(page, readToken);
    await nav(page, 'Search').click();
    await page.getByRole('heading', { level: 1, name: 'Search' }).waitFor();
    await page.getByLabel('Query').fill('breach');
    await page.getByLabel('Facets (fields, comma-separated)').fill('kind');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('status').filter({ hasText: 'matching document' }).waitFor();
    const hits = page.getByTestId('search-hit');
    await hits.first().waitFor();
    const marks = await page.locator('[data-testid="search-hit"] mark').allTextContents();
    assert.ok(marks.length > 0 && marks.every((mark) => mark.toLowerCase() === 'breach'), marks.join());
    const plantedHit = hits.filter({ hasText: 'planted-1' });
    assert.match((await plantedHit.textContent()) ?? '', /<img src=x onerror="window.pwned=1"> data breach/);
    assert.equal(await plantedHit.locator('img, b').count(), 0, 'no element made of what the document holds');
    assert.equal(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned), undefined);
    await page.getByTestId('facet-kind').filter({ hasText: 'test (1)' }).waitFor();
    await page.getByLabel('Words').selectOption('and');
    await page.getByLabel('Query').fill('data breach');
    await page.getByLabel('Sort (field:asc or field:desc)').fill('doc_id:desc');
    await page.getByRole('button', { name: 'Search' }).click();
    const asked = await request(`${server.url}/admin/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'data breach', operator: 'and', sort: ['doc_id:desc'], top_k: 10 }),
    });
    const expected = ((await asked.body.json()) as { hits: { documents: Array<{ doc_id: string }> } }).hits.documents.map((hit) => hit.doc_id);
    assert.ok(expected.length > 1 && expected.join() === [...expected].sort().reverse().join(), expected.join());
    await page.waitForFunction(
      (ids) => [...document.querySelectorAll('[data-testid="search-hit"] .mono')].map((span) => span.textContent?.split(' · ')[0]).join() === ids,
      expected.join(),
    );
    await shoot(page, 'search');
    const deleted = await request(`${server.url}/admin/documents/planted-1`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${writeToken}` },
    });
    assert.equal(deleted.statusCode, 200);
  });

  it('edits the synonym rules on Search settings, which searches then apply; a read-only token sees them and no button that writes', async () => {
    const adminSearch = async (query: string) => {
      const answer = await request(`${server.url}/admin/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${readToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query, top_k: 10 }),
      });
      return ((await answer.body.json()) as { hits: { documents: Array<{ doc_id: string }> } }).hits.documents.map((hit) => hit.doc_id);
    };
    assert.deepEqual(await adminSearch('deletion'), []);
    const page = await openBrowser();
    await signIn(page, writeToken);
    await nav(page, 'Search settings').click();
    await page.getByRole('heading', { level: 1, name: 'Search settings' }).waitFor();
    await page.getByTestId('no-synonyms').filter({ hasText: 'No rules yet.' }).waitFor();
    await page.getByLabel('Members (comma-separated)').fill('erasure');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('alert').filter({ hasText: 'at least 2 members' }).waitFor();
    await page.getByLabel('Members (comma-separated)').fill('erasure, deletion, right to be forgotten');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByLabel('Kind').selectOption('one-way');
    await page.getByLabel('From').fill('gdpr');
    await page.getByLabel('Also matches (comma-separated)').fill('personal data');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('button', { name: 'Save rules' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved 2 rules (version 1)' }).waitFor();
    assert.deepEqual((await adminSearch('deletion')).sort(), ['law-2']);
    await shoot(page, 'search-settings');
    await page.getByRole('button', { name: 'Remove gdpr → personal data' }).click();
    await page.getByRole('button', { name: 'Save rules' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved 1 rules (version 2)' }).waitFor();
    await page.reload();
    await page.getByTestId('synonym-rule').filter({ hasText: 'erasure = deletion = right to be forgotten' }).waitFor();
    assert.equal(await page.getByTestId('synonym-rule').count(), 1);
    const reader = await openBrowser();
    await signIn(reader, readToken);
    await nav(reader, 'Search settings').click();
    await reader.getByTestId('synonym-rule').first().waitFor();
    assert.equal(await reader.getByRole('button', { name: /Save rules|Add rule|Remove/ }).count(), 0);
  });

  it('creates a key shown once, tops it up, and shows its balance and chart move with real traffic', async () => {
    const page = await openBrowser();
    await signIn(page, writeToken);
    await nav(page, 'Keys').click();
    await page.getByLabel('Name', { exact: true }).fill('Acme Research');
    await page.getByLabel('Credits').fill('5');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('status').filter({ hasText: 'Created key "Acme Research" with 5 credits.' }).waitFor();
    const apiKey = await page.getByRole('textbox', { name: 'The new key for "Acme Research"' }).inputValue();
    assert.match(apiKey, /^[0-9a-f]{64}$/);
    await page.getByRole('cell', { name: /Acme Research/ }).waitFor();
    await shoot(page, 'keys');

    await page.getByRole('link', { name: 'Open its page' }).click();
    await page.getByRole('heading', { level: 1, name: /Acme Research/ }).waitFor();
    await page.getByLabel('Credits').first().fill('20');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.getByRole('status').filter({ hasText: 'Added 20 credits: the balance is 25.' }).waitFor();
    await page.getByTestId('balance').filter({ hasText: /^25$/ }).waitFor();

    for (const docId of ['law-1', 'law-2', 'law-1']) {
      const answer = await fetch(`${server.url}/document`, { headers: { 'x-api-key': apiKey, 'svc-doc-id': docId } });
      assert.equal(answer.status, 200);
    }
    const query = await fetch(`${server.url}/query`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'personal data' }),
    });
    assert.equal(query.status, 200);

    await page.reload();
    await page.getByTestId('balance').filter({ hasText: /^21$/ }).waitFor();
    const usage = page.getByRole('region', { name: 'Usage' });
    await usage.getByText('Show the figures').click();
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = usage.getByRole('row', { name: new RegExp(`^${today}`) });
    await eventually(
      async () => assert.deepEqual(await todayRow.getByRole('cell').allInnerTexts(), [today, '4', '4'], 'credits spent and requests charged today'),
      PAGE_LOAD_MS,
    );
    const charges = page.getByRole('region', { name: 'Recent charges' }).getByRole('row');
    await eventually(async () => assert.equal(await charges.count(), 5, 'a header row and four charges'), PAGE_LOAD_MS);
    await usage.getByText('Show the figures').click();
    await shoot(page, 'key');

    // A caller without credits: its 402 shows among the refusals.
    const created = await fetch(`${server.url}/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${writeToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Broke Ltd', credits: 0 }),
    });
    const brokeKey = ((await created.json()) as { key: string }).key;
    assert.equal((await fetch(`${server.url}/document`, { headers: { 'x-api-key': brokeKey, 'svc-doc-id': 'law-1' } })).status, 402);

    await nav(page, 'Overview').click();
    await page.getByRole('link', { name: 'Acme Research' }).waitFor();
    // The tiles show "…" until the totals arrive.
    const tile = (label: string) => page.getByRole('region', { name: 'Totals' }).locator('.tile', { hasText: label }).locator('.tile-value');
    await eventually(async () => assert.equal(await tile('402').textContent(), '1'), PAGE_LOAD_MS);
    await eventually(async () => assert.equal(await tile('Credits spent').textContent(), '4'), PAGE_LOAD_MS);
    await shoot(page, 'overview');
  });

  it('disables, enables, rolls and revokes a key, each after a confirmation, and the API agrees', async () => {
    const page = await openBrowser();
    await signIn(page, writeToken);
    await nav(page, 'Keys').click();
    await page.getByLabel('Name', { exact: true }).fill('Initech');
    await page.getByLabel('Credits').fill('3');
    await page.getByRole('button', { name: 'Create key' }).click();
    const apiKey = await page.getByRole('textbox', { name: 'The new key for "Initech"' }).inputValue();
    await page.getByRole('link', { name: 'Open its page' }).click();
    const credits = (key: string) => fetch(`${server.url}/credits`, { headers: { 'x-api-key': key } }).then((answer) => answer.status);

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await credits(apiKey), 200, 'cancelled: nothing changed');
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('status').filter({ hasText: 'The key is disabled.' }).waitFor();
    assert.equal(await credits(apiKey), 403);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('status').filter({ hasText: 'The key is active.' }).waitFor();
    assert.equal(await credits(apiKey), 200);

    const refill = page.getByRole('region', { name: 'Refill' });
    await refill.getByLabel('Credits', { exact: true }).fill('10');
    await refill.getByLabel('Every').selectOption('week');
    await refill.getByRole('button', { name: 'Set refill' }).click();
    await page.getByRole('status').filter({ hasText: 'Refill set: the balance is 13.' }).waitFor();
    await refill.getByText(/Grants 10 credits every week; unused ones expire at the next refill. Next at/).waitFor();
    await refill.getByRole('button', { name: 'End refill' }).click();
    await refill.getByText('No refill plan.').waitFor();

    await page.getByLabel('Credits').first().fill('1000000000000');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'holds 13 credits; adding 1000000000000 would pass 1000000000000. Nothing was added.' })
      .waitFor();

    await page.getByLabel('Former key keeps working for (minutes)').fill('0');
    await page.getByRole('button', { name: 'Roll' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Roll' }).click();
    await page.getByRole('status').filter({ hasText: 'Rolled: the former key no longer works.' }).waitFor();
    const rolledKey = await page.getByRole('textbox', { name: 'The new key for "Initech"' }).inputValue();
    assert.equal(await credits(apiKey), 401);
    assert.equal(await credits(rolledKey), 200);

    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke for good' }).click();
    await page.getByText('This key is revoked: nothing more can be done with it.').waitFor();
    assert.equal(await credits(rolledKey), 403);

    await nav(page, 'Keys').click();
    await page.getByLabel('Status').selectOption('revoked');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('cell', { name: /Acme Research/ }).waitFor({ state: 'detached' });
    await page.getByRole('cell', { name: /Initech/ }).waitFor();

    await nav(page, 'Audit log').click();
    for (const action of ['keys.create', 'keys.topup', 'keys.disable', 'keys.roll', 'keys.revoke', 'documents.ingest']) {
      await page.getByRole('cell', { name: action, exact: true }).first().waitFor();
    }
    await shoot(page, 'audit-log');
  });

  it('a read-only token sees everything and no button that writes', async () => {
    const page = await openBrowser();
    await signIn(page, readToken);
    await page.getByText('read-only').waitFor();
    await nav(page, 'Keys').click();
    await page.getByRole('link', { name: 'Acme Research' }).click();
    await page.getByTestId('balance').waitFor();
    await nav(page, 'Documents').click();
    await page.getByTestId('document-count').filter({ hasText: '2' }).waitFor();
    await page.getByLabel('Document id').fill('law-1');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { name: 'Data breach notification' }).waitFor();
    for (const name of ['Create key', 'Top up', 'Disable', 'Revoke', 'Roll', 'Save caps', 'Set refill', 'Add documents', 'Delete this document']) {
      assert.equal(await page.getByRole('button', { name }).count(), 0, `no "${name}" button`);
    }
    await nav(page, 'Keys').click();
    await page.getByRole('cell', { name: /Acme Research/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
    await page.getByRole('link', { name: 'Acme Research' }).click();
    await page.getByTestId('balance').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Top up' }).count(), 0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
  });

  it("sets a key's spend caps, which the API then has, and shows what each period spent", async () => {
    const page = await openBrowser();
    await signIn(page, writeToken);
    await nav(page, 'Keys').click();
    await page.getByRole('link', { name: 'Acme Research' }).click();
    await page.getByTestId('balance').waitFor();
    await page.getByLabel('Credits a day').fill('500');
    await page.getByLabel('Credits a month').fill('9000');
    await page.getByRole('button', { name: 'Save caps' }).click();
    await page.getByText('Spend caps saved.').waitFor();
    await page.getByTestId('caps').filter({ hasText: 'of 500 this day' }).waitFor();
    const keyId = (await page.locator('.tile-value.mono').first().textContent())?.trim() ?? '';
    const shown = await fetch(`${server.url}/admin/keys/${keyId}`, { headers: { authorization: `Bearer ${writeToken}` } });
    assert.deepEqual(((await shown.json()) as { spend_caps: unknown }).spend_caps, [
      { credits: 500, interval: 'day' },
      { credits: 9000, interval: 'month' },
    ]);
    await page.getByLabel('Credits a day').fill('');
    await page.getByLabel('Credits a month').fill('');
    await page.getByRole('button', { name: 'Save caps' }).click();
    await page.getByText('No spend caps now.').waitFor();
  });

  it("creates an account, a key of it shown once, tops the account up and caps it; the key spends the account's balance", async () => {
    const page = await openBrowser();
    await signIn(page, writeToken);
    await nav(page, 'Accounts').click();
    await page.getByRole('heading', { level: 1, name: 'Accounts' }).waitFor();
    const create = page.getByRole('region', { name: 'Create an account' });
    await create.getByLabel('Name').fill('Globex');
    await create.getByLabel('External id').fill('cus_globex');
    await create.getByLabel('Credits').fill('10');
    await create.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').filter({ hasText: 'Created account "Globex" with 10 credits.' }).waitFor();
    await page.getByRole('link', { name: 'Open the page of "Globex"' }).click();
    await page.getByTestId('account-balance').filter({ hasText: '10' }).waitFor();
    await page.getByLabel('Name').fill('globex-prod');
    await page.getByRole('button', { name: 'Create key' }).click();
    const plain = await page.getByRole('textbox', { name: 'The new key for "globex-prod"' }).inputValue();
    assert.match(plain, /^[0-9a-f]{64}$/);
    await page.getByRole('cell', { name: /globex-prod/ }).waitFor();
    const spent = await fetch(`${server.url}/document`, { headers: { 'x-api-key': plain, 'svc-doc-id': 'law-1' } });
    assert.equal(spent.status, 200);
    await page.getByLabel('Credits', { exact: true }).fill('5');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.getByText('the balance is 14').waitFor();
    await page.getByTestId('account-balance').filter({ hasText: '14' }).waitFor();
    await page.getByLabel('Credits a day').fill('3');
    await page.getByRole('button', { name: 'Save caps' }).click();
    await page.getByText('Spend caps saved.').waitFor();
    // A cap counts the whole period it is set in: the request made before it is in it.
    await page.getByTestId('account-caps').filter({ hasText: '1 of 3 this day' }).waitFor();
    await page.getByTestId('usage-by-key').getByRole('cell', { name: 'globex-prod' }).waitFor();
    await shoot(page, 'account');
    const found = await fetch(`${server.url}/admin/accounts?external_id=cus_globex`, { headers: { authorization: `Bearer ${writeToken}` } });
    const [account] = ((await found.json()) as { accounts: Array<{ balance: number; spend_caps: unknown }> }).accounts;
    assert.deepEqual([account?.balance, account?.spend_caps], [14, [{ credits: 3, interval: 'day' }]]);
    await nav(page, 'Accounts').click();
    await page.getByRole('link', { name: 'Globex' }).waitFor();
    await shoot(page, 'accounts');
  });

  it('a token with some scopes sees what they allow and no button they do not', async () => {
    const page = await openBrowser();
    await signIn(page, billingToken);
    assert.deepEqual(
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents(),
      ['Overview', 'Keys'],
      'no pages it cannot read (accounts:read is not among its scopes)',
    );
    await nav(page, 'Keys').click();
    await page.getByRole('cell', { name: /Acme Research/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0);
    await page.getByRole('link', { name: 'Acme Research' }).click();
    await page.getByTestId('balance').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Top up' }).count(), 1, 'credits:write tops up');
    for (const name of ['Disable', 'Revoke', 'Roll', 'Save caps']) assert.equal(await page.getByRole('button', { name }).count(), 0, `no "${name}"`);
  });

  it('offers an opening balance only to a token that may grant credits', async () => {
    const page = await openBrowser();
    await signIn(page, accountsToken);
    await nav(page, 'Accounts').click();
    const create = page.getByRole('region', { name: 'Create an account' });
    await create.getByLabel('Name').waitFor();
    assert.equal(await create.getByLabel('Credits').count(), 0, 'accounts:write alone grants no credits');
    await create.getByLabel('Name').fill('Initech');
    await create.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').filter({ hasText: 'Created account "Initech" with 0 credits.' }).waitFor();
  });

  it('works from the keyboard, labels every field, and fits a phone screen', async () => {
    const page = await openBrowser(PHONE);
    await signIn(page, writeToken);
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'H1', "a new page's heading takes the focus, so it is announced");
    await page.reload();
    await page.locator('main h1').waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to the content');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Keys');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
    await page.waitForFunction(() => document.activeElement?.textContent === 'Keys' && document.activeElement.tagName === 'H1');
    for (const hash of ['#/', '#/accounts', '#/keys', '#/documents', '#/audit-log']) {
      await page.goto(`${server.url}/console${hash}`);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      const unlabelled = await page.$$eval('input, select', (fields) =>
        fields
          .filter((field) => (field as HTMLInputElement).labels?.length === 0 && !field.getAttribute('aria-label'))
          .map((field) => field.outerHTML),
      );
      assert.deepEqual(unlabelled, [], `every field on ${hash} has a label`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${hash} fits ${PHONE.width} px (overflows by ${overflow})`);
    }
    await page.goto(`${server.url}/console#/`);
    await page.getByRole('link', { name: 'Acme Research' }).waitFor();
    await shoot(page, 'overview-phone');
    await page.getByRole('link', { name: 'Acme Research' }).click();
    await page.getByTestId('balance').waitFor();
    await page.waitForLoadState('networkidle');
    await shoot(page, 'key-phone');
    assert.deepEqual(outside, [], 'the console fetched nothing from outside the service');
  });
});
