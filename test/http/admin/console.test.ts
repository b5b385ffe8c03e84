import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../../src/app.js';
import { assertEnvelope, createTestApp, DEFAULT_SETTINGS, type TestContext } from '../../support/helper.js';

/** The console's files (built into dist/console by npm run build; the test runner builds them first). */
describe('GET /console', () => {
  let context: TestContext;
  before(async () => {
    context = await createTestApp();
  });
  after(async () => context.close());

  it('serves the page and its script and stylesheet, from this origin only', async () => {
    for (const url of ['/console', '/console/']) {
      const page = await context.app.inject({ url });
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(page.body, /<script type="module" src="\/console\/console.js">/);
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
    }
    const script = await context.app.inject({ url: '/console/console.js' });
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /^text\/javascript/);
    assert.doesNotMatch(script.body, /https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\//i, 'the script names no outside address to load from');
    const style = await context.app.inject({ url: '/console/console.css' });
    assert.match(String(style.headers['content-type']), /^text\/css/);
  });

  it('answers 404 in the envelope for a file it does not have', async () => {
    assertEnvelope(await context.app.inject({ url: '/console/missing.js' }), 404, /console file/);
    assertEnvelope(await context.app.inject({ url: '/console/..%2fpackage.json' }), 404);
  });

  it('is served with the admin API, not on the public listener', async () => {
    const publicApp = await buildApp(context.services, { settings: DEFAULT_SETTINGS, plane: 'public' });
    try {
      assert.equal((await publicApp.inject({ url: '/console' })).statusCode, 404);
    } finally {
      await publicApp.close();
    }
  });
});
