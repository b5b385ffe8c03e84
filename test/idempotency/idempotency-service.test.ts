import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IdempotencyService } from '../../src/idempotency/idempotency-service.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { tempDir } from '../support/helper.js';

describe('IdempotencyService', () => {
  const dir = tempDir();
  let store: SqliteStore;
  let service: IdempotencyService;
  before(() => {
    store = new SqliteStore(dir.path);
    service = new IdempotencyService(store.idempotency, { ttlMs: 60_000, lockMs: 60_000 });
  });
  after(async () => {
    await store.close();
    dir.remove();
  });

  const request = { method: 'POST', path: '/admin/keys/:id/topup', docId: 'key_1', body: { credits: 5 } };

  it('takes two requests for the same only when method, path, id and body are the same', () => {
    const same = IdempotencyService.fingerprint(request);
    assert.equal(IdempotencyService.fingerprint({ ...request, body: { credits: 5 } }), same);
    for (const other of [{ method: 'PUT' }, { path: '/admin/keys/:id/refill' }, { docId: 'key_2' }, { body: { credits: 6 } }, { body: undefined }]) {
      assert.notEqual(IdempotencyService.fingerprint({ ...request, ...other }), same, JSON.stringify(other));
    }
  });

  it('runs a request once: a repeat is told it is running, then replayed; another request with the key is a mismatch', async () => {
    const first = await service.claim('admin', 'pay-1', request);
    assert.equal(first.outcome, 'claimed');
    assert.deepEqual(await service.claim('admin', 'pay-1', request), { outcome: 'in-progress' });
    const answer = { status: 200, body: '{"balance":6}', contentType: 'application/json', creditsRemaining: null };
    await service.complete({ keyHash: 'admin', idempotencyKey: 'pay-1', ref: (first as { ref: string }).ref }, answer);
    assert.deepEqual(await service.claim('admin', 'pay-1', request), { outcome: 'replay', response: answer });
    assert.deepEqual(await service.claim('admin', 'pay-1', { ...request, body: { credits: 9 } }), { outcome: 'mismatch' });
  });

  it('lets a released claim run afresh, and never releases a completed one', async () => {
    const claimed = (await service.claim('admin', 'pay-2', request)) as { ref: string };
    const entry = { keyHash: 'admin', idempotencyKey: 'pay-2', ref: claimed.ref };
    await service.release(entry);
    const again = (await service.claim('admin', 'pay-2', request)) as { outcome: string; ref: string };
    assert.equal(again.outcome, 'claimed');
    await service.complete({ ...entry, ref: again.ref }, { status: 200, body: '{}', contentType: 'application/json', creditsRemaining: null });
    await service.release({ ...entry, ref: again.ref });
    assert.equal((await service.claim('admin', 'pay-2', request)).outcome, 'replay');
  });
});
