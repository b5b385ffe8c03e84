import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { CHROMIUM, CHROMIUM_FLAGS, skipWithoutChromium } from '../support/browser.js';
import { tempDir } from '../support/helper.js';

/** The API reference at /docs, in a real browser: it must work on a private network. */
describe('the /docs page in Chromium', {
  skip: skipWithoutChromium,
}, () => {
  const dir = tempDir();
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    server = await startServer(
      loadConfig({ DATA_DIR: dir.path, PORT: '0', HOST: '127.0.0.1', SEED_DEMO: 'false', LOG_LEVEL: 'silent', FACE_WORKERS: '0' }),
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    dir.remove();
  });

  it('renders the reference with the API-key scheme preselected, fetching nothing from outside and offering no hosted service', async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) outside.push(request.url());
    });
    await page.goto(`${server.url}/docs`, { waitUntil: 'networkidle' });
    await page.getByText('Greeting and availability check').first().waitFor();
    // The sidebar comes first; the operations and their auth selector render after it.
    await page
      .getByText(/Selected Auth Type/)
      .first()
      .waitFor();
    // biome-ignore lint/performance/useDomNodeTextContent: what is shown, not hidden nodes' text
    const text = await page.locator('body').innerText();
    assert.match(text, /Selected Auth Type:\s+apiKey/, 'the key scheme is preselected');
    assert.doesNotMatch(text, /Ask AI|Open API Client/i, 'no button leads to a hosted service');
    assert.deepEqual(outside, [], 'no request left the service');
  });
});
