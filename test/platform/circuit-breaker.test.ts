import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CircuitBreaker } from '../../src/platform/circuit-breaker.js';

describe('circuit breaker', () => {
  const clock = () => {
    let now = 0;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  it('opens after the configured consecutive failures, and a success in between resets the count', () => {
    const time = clock();
    const breaker = new CircuitBreaker(3, 1000, time.now);
    breaker.recordFailure();
    breaker.recordFailure();
    breaker.recordSuccess();
    breaker.recordFailure();
    breaker.recordFailure();
    assert.equal(breaker.state, 'closed');
    breaker.recordFailure();
    assert.equal(breaker.state, 'open');
    assert.equal(breaker.tryAcquire(), false);
  });

  it('after the cool-down lets exactly one probe through; its success closes, its failure re-opens', () => {
    const time = clock();
    const breaker = new CircuitBreaker(1, 1000, time.now);
    breaker.recordFailure();
    time.advance(999);
    assert.equal(breaker.tryAcquire(), false);
    time.advance(1);
    assert.equal(breaker.tryAcquire(), true);
    assert.equal(breaker.tryAcquire(), false, 'only one probe at a time');
    breaker.recordFailure();
    assert.equal(breaker.state, 'open');
    time.advance(1000);
    assert.equal(breaker.tryAcquire(), true);
    breaker.recordSuccess();
    assert.equal(breaker.state, 'closed');
    assert.equal(breaker.tryAcquire(), true);
    assert.equal(breaker.tryAcquire(), true);
  });

  it('gives the probe slot back when the admitted request never went downstream', () => {
    const time = clock();
    const breaker = new CircuitBreaker(1, 10, time.now);
    breaker.recordFailure();
    time.advance(10);
    assert.equal(breaker.tryAcquire(), true);
    breaker.release();
    assert.equal(breaker.tryAcquire(), true);
  });
});
