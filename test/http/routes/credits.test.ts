import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashApiKey } from '../../../src/billing/keys.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

describe('GET /credits', () => {
  let context: TestContext;
  before(async () => {
    context = await createTestApp();
  });
  after(async () => context.close());

  const credits = (key: string) => context.app.inject({ url: '/credits', headers: { 'x-api-key': key } });

  it('returns the balance and never spends it', async () => {
    const key = await context.createKey(42);
    for (let call = 0; call < 5; call++) {
      const response = await credits(key);
      assert.equal(response.statusCode, 200);
      const body = json(response);
      assert.equal(body.status, 200);
      assert.equal(body.current_balance, 42);
      assert.equal(typeof body.message, 'string');
      assert.equal(response.headers['x-credits-remaining'], undefined);
    }
    assert.equal(await context.balanceOf(key), 42);
  });

  it('answers 402 with current_balance 0 at zero balance', async () => {
    const key = await context.createKey(0);
    const body = assertEnvelope(await credits(key), 402);
    assert.equal(body.current_balance, 0);
  });

  it('sees spending and top-ups on the next request', async () => {
    const key = await context.createKey(2);
    await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query: 'breach' } });
    assert.equal(json(await credits(key)).current_balance, 1);
    await context.store.ledger.topUp((await context.store.ledger.listKeys()).at(-1)!.id, 10);
    assert.equal(json(await credits(key)).current_balance, 11);
  });
});

describe('402 with CREDITS_PURCHASE_URL set', () => {
  it("names where to buy, with the key's account id for the payment to credit (never the key), on /credits and on every billable route", async () => {
    const context = await createTestApp({ settings: { purchaseUrl: 'https://buy.stripe.example/test_abc?prefilled_email=a%40b.c' } });
    try {
      const key = await context.createKey(0);
      const { accountId } = (await context.store.ledger.findKeyByHash(hashApiKey(key)))!;
      const expected = `https://buy.stripe.example/test_abc?prefilled_email=a%40b.c&client_reference_id=${accountId}`;
      const answers = [
        await context.app.inject({ url: '/credits', headers: { 'x-api-key': key } }),
        await context.app.inject({ url: '/document', headers: { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' } }),
        await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query: 'breach' } }),
      ];
      for (const response of answers) {
        const body = assertEnvelope(response, 402, /Buy more at https:\/\/buy\.stripe\.example\/test_abc\?/);
        assert.equal(body.purchase_url, expected);
        assert.ok(body.message.endsWith(expected));
        assert.ok(!response.body.includes(key), 'never the key');
      }
      assert.equal(json(answers[0]!).current_balance, 0);
      const unset = await createTestApp();
      try {
        const empty = await unset.createKey(0);
        const body = assertEnvelope(await unset.app.inject({ url: '/document', headers: { 'x-api-key': empty, 'svc-doc-id': 'gdpr-17' } }), 402);
        assert.equal(body.purchase_url, undefined);
      } finally {
        await unset.close();
      }
    } finally {
      await context.close();
    }
  });
});
