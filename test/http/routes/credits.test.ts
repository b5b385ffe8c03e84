import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../helper.js';

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
