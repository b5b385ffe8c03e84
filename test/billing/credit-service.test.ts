import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CreditService } from '../../src/billing/credit-service.js';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { hashApiKey } from '../../src/billing/keys.js';
import type { Ledger } from '../../src/billing/ledger.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { tempDir } from '../support/helper.js';

describe('CreditService.identify', () => {
  const dir = tempDir();
  let store: SqliteStore;
  before(() => {
    store = new SqliteStore(dir.path);
  });
  after(async () => {
    await store.close();
    dir.remove();
  });

  /** The ledger, with its key lookups counted and, while `failing` is set, failing. */
  function watched(): { ledger: Ledger; lookups: () => number; failing: { on: boolean } } {
    let lookups = 0;
    const failing = { on: false };
    const proxy = new Proxy(store.ledger, {
      get(target, property, receiver) {
        if (property !== 'findKeyByHash') return Reflect.get(target, property, receiver);
        return async (keyHash: string) => {
          lookups++;
          if (failing.on) throw new Error('store unavailable');
          return target.findKeyByHash(keyHash);
        };
      },
    });
    return { ledger: proxy, lookups: () => lookups, failing };
  }

  it('answers requests arriving together with one lookup, then from memory', async () => {
    const key = await new KeyAdmin(store.ledger).create(5, 'together');
    const { ledger: counted, lookups } = watched();
    const credits = new CreditService(counted);
    const answers = await Promise.all(Array.from({ length: 20 }, () => credits.identify(hashApiKey(key.key))));
    assert.equal(lookups(), 1);
    assert.deepEqual(new Set(answers.map((answer) => answer?.key.id)), new Set([key.record.id]));
    const cached = credits.identify(hashApiKey(key.key));
    assert.ok(!(cached instanceof Promise));
    assert.equal(cached?.key.id, key.record.id);
    assert.equal(lookups(), 1);
  });

  it('does not keep a failed lookup: the next request asks the store again', async () => {
    const key = await new KeyAdmin(store.ledger).create(5, 'retried');
    const { ledger: counted, lookups, failing } = watched();
    const credits = new CreditService(counted);
    failing.on = true;
    const failed = await Promise.allSettled([credits.identify(hashApiKey(key.key)), credits.identify(hashApiKey(key.key))]);
    assert.deepEqual(
      failed.map((result) => result.status),
      ['rejected', 'rejected'],
    );
    assert.equal(lookups(), 1);
    failing.on = false;
    assert.equal((await credits.identify(hashApiKey(key.key)))?.key.id, key.record.id);
    assert.equal(lookups(), 2);
  });

  it('answers undefined for unknown and revoked keys', async () => {
    const admin = new KeyAdmin(store.ledger);
    const key = await admin.create(5, 'revoked');
    await admin.setStatus(key.record.id, 'revoked');
    const credits = new CreditService(store.ledger);
    assert.equal(await credits.identify(hashApiKey(key.key)), undefined);
    assert.equal(await credits.identify(hashApiKey('f'.repeat(64))), undefined);
  });
});
