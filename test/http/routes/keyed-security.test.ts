import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KeyAdmin } from '../../../src/billing/key-admin.js';
import { FaceDownstream } from '../../support/face-downstream.js';
import { assertEnvelope, createTestApp, json, pngLikeImage, type TestContext } from '../../support/helper.js';

/** Every protected route, called with a valid request apart from the key. */
const PROTECTED = [
  { name: 'GET /credits', method: 'GET', url: '/credits', headers: {}, billable: false },
  { name: 'GET /usage', method: 'GET', url: '/usage', headers: {}, billable: false },
  { name: 'GET /document', method: 'GET', url: '/document', headers: { 'svc-doc-id': 'gdpr-17' }, billable: true },
  { name: 'POST /query', method: 'POST', url: '/query', headers: {}, payload: { query: 'breach' }, billable: true },
  {
    name: 'POST /face/search',
    method: 'POST',
    url: '/face/search',
    headers: {},
    payload: { image_b64: pngLikeImage().toString('base64') },
    billable: true,
  },
] as const;

describe('authentication on every protected route', () => {
  let context: TestContext;
  let downstream: FaceDownstream;
  before(async () => {
    downstream = await new FaceDownstream().start();
    context = await createTestApp({ face: downstream.client() });
  });
  after(async () => {
    await context.close();
    await downstream.stop();
  });

  const call = (route: (typeof PROTECTED)[number], key?: string) =>
    context.app.inject({
      method: route.method,
      url: route.url,
      headers: { ...route.headers, ...(key === undefined ? {} : { 'x-api-key': key }) },
      ...('payload' in route ? { payload: route.payload } : {}),
    });

  for (const route of PROTECTED) {
    describe(route.name, () => {
      it('answers 400 to a missing key, naming the header', async () => {
        assertEnvelope(await call(route), 400, /x-api-key/);
      });

      for (const [label, malformed] of [
        ['too short', 'abc123'],
        ['65 characters', 'a'.repeat(65)],
        ['non-hex', 'g'.repeat(64)],
        ['surrounded by spaces', ` ${'a'.repeat(62)} `],
        ['empty', ''],
      ] as const) {
        it(`answers 400 to a malformed key (${label})`, async () => {
          assertEnvelope(await call(route, malformed), 400, /x-api-key/);
        });
      }

      it('answers 400 to a key header sent twice, without charging either key', async () => {
        const key = await context.createKey(2);
        const response = await context.app.inject({
          method: route.method,
          url: route.url,
          headers: { ...route.headers, 'x-api-key': [key, key] },
          ...('payload' in route ? { payload: route.payload } : {}),
        });
        assertEnvelope(response, 400, /x-api-key/);
        assert.equal(await context.balanceOf(key), 2);
      });

      it('answers 401 to a well-formed unknown key', async () => {
        const body = assertEnvelope(await call(route, 'ab'.repeat(32)), 401);
        if (route.url === '/credits') assert.equal(body.current_balance, null);
      });

      it('accepts the upper-case spelling of a key as the same key and charges it', async () => {
        const key = await context.createKey(3);
        const response = await call(route, key.toUpperCase());
        assert.notEqual(response.statusCode, 401);
        assert.notEqual(response.statusCode, 400);
        assert.equal(await context.balanceOf(key), route.billable ? 2 : 3);
      });

      for (const status of ['revoked', 'disabled'] as const) {
        it(`answers 403 to a ${status} key and charges nothing`, async () => {
          const key = await context.createKey(5);
          await new KeyAdmin(context.store.ledger, null, Date.now, true).setStatus(key, status);
          const body = assertEnvelope(await call(route, key), 403, new RegExp(status));
          if (route.url === '/credits') assert.equal(body.current_balance, null);
          assert.equal(await context.balanceOf(key), 5);
        });
      }

      it('takes effect on the very next request after an enable', async () => {
        const key = await context.createKey(5);
        const admin = new KeyAdmin(context.store.ledger, null, Date.now, true);
        await admin.setStatus(key, 'disabled');
        assert.equal((await call(route, key)).statusCode, 403);
        await admin.setStatus(key, 'active');
        assert.notEqual((await call(route, key)).statusCode, 403);
      });

      if (route.billable) {
        it('answers 402 at zero balance without going negative', async () => {
          const key = await context.createKey(0);
          assertEnvelope(await call(route, key), 402, /credit/);
          assert.equal(await context.balanceOf(key), 0);
        });
      }
    });
  }

  it('never reveals the key in any response', async () => {
    const key = await context.createKey(2);
    for (const route of PROTECTED) {
      const response = await call(route, key);
      assert.ok(!response.body.includes(key), `${route.name} echoed the key`);
      assert.ok(!JSON.stringify(response.headers).includes(key));
    }
    assert.equal(json(await call(PROTECTED[0], key)).current_balance, 0);
  });
});
