import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { priceOf } from '../../src/billing/ledger-rules.js';

describe('priceOf: what a request costs', () => {
  const service = { '/query': 2, '/query:semantic': 5 };

  it("takes the key's price for the mode, then the key's for the endpoint, then the service's for the mode, then for the endpoint, then 1", () => {
    assert.equal(priceOf('/query', { prices: { '/query:semantic': 7, '/query': 4 } }, service, '/query:semantic'), 7);
    assert.equal(priceOf('/query', { prices: { '/query': 4 } }, service, '/query:semantic'), 4);
    assert.equal(priceOf('/query', { prices: null }, service, '/query:semantic'), 5);
    assert.equal(priceOf('/query', null, service, '/query:hybrid'), 2);
    assert.equal(priceOf('/query', null, service), 2);
    assert.equal(priceOf('/document', null, service), 1);
  });
});
