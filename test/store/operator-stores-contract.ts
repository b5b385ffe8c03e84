import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NewAuditEntry } from '../../src/admin/admin-store.js';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import type { Store } from '../../src/store/store.js';

/**
 * The portal, admin-token and webhook stores, as each store promises them: every operator change
 * commits with its audit entry, and a change whose entry cannot be written leaves nothing behind.
 * A `detail` holding a BigInt cannot be serialised: the fault is raised inside the transaction.
 */
export function operatorStoresContract(storeOf: () => Store): void {
  let sequence = 0;
  const entry = (action: string, target: string): NewAuditEntry => ({
    actor: 'contract',
    action,
    target,
    requestId: 'req-contract',
    detail: { n: 1 },
  });
  const unwritable = (action: string, target: string): NewAuditEntry => ({ ...entry(action, target), detail: { n: 1n } });
  const newAccount = async () => {
    const id = `acct_portal${++sequence}`;
    assert.equal((await storeOf().ledger.createAccount({ id, name: 'portal', credits: 0 })).outcome, 'created');
    return id;
  };
  const audited = async (action: string, target: string) =>
    (await storeOf().admin.listAudit(200, null)).items.filter((item) => item.action === action && item.target === target).length;

  describe('portal store', () => {
    it('redeems a link once, for its account, until it expires; an unknown link is unknown', async () => {
      const store = storeOf();
      const account = await newAccount();
      await store.portal.createLink(
        `hash-${sequence}`,
        { accountId: account, origin: 'link of admin token tok_x', expiresAt: '2030-01-01T00:00:00.000Z' },
        entry('accounts.portal-link', account),
      );
      assert.equal(await audited('accounts.portal-link', account), 1);
      const at = '2029-01-01T00:00:00.000Z';
      assert.deepEqual(await store.portal.redeemLink(`hash-${sequence}`, at), {
        outcome: 'redeemed',
        accountId: account,
        origin: 'link of admin token tok_x',
      });
      assert.deepEqual(await store.portal.redeemLink(`hash-${sequence}`, at), { outcome: 'used' });
      assert.deepEqual(await store.portal.redeemLink('hash-none', at), { outcome: 'unknown' });
      await store.portal.createLink(
        `late-${sequence}`,
        { accountId: account, origin: 'o', expiresAt: '2028-01-01T00:00:00.000Z' },
        entry('accounts.portal-link', account),
      );
      assert.deepEqual(await store.portal.redeemLink(`late-${sequence}`, at), { outcome: 'expired' });
    });

    it('keeps a session until it ends or expires, and ends every session of an account with its links, audited with the counts', async () => {
      const store = storeOf();
      const account = await newAccount();
      const session = { accountId: account, origin: 'key key_1', csrf: 'csrf-1', expiresAt: '2030-01-01T00:00:00.000Z' };
      await store.portal.createSession(`s1-${sequence}`, session, entry('portal.sign-in', account));
      await store.portal.createSession(`s2-${sequence}`, session, entry('portal.sign-in', account));
      assert.deepEqual(await store.portal.findSession(`s1-${sequence}`, '2029-01-01T00:00:00.000Z'), session);
      assert.equal(await store.portal.findSession(`s1-${sequence}`, '2031-01-01T00:00:00.000Z'), undefined, 'expired');
      await store.portal.endSession(`s1-${sequence}`);
      assert.equal(await store.portal.findSession(`s1-${sequence}`, '2029-01-01T00:00:00.000Z'), undefined, 'ended');
      await store.portal.createLink(
        `open-${sequence}`,
        { accountId: account, origin: 'o', expiresAt: '2030-01-01T00:00:00.000Z' },
        entry('accounts.portal-link', account),
      );
      const ended = await store.portal.endAccountSessions(account, '2029-01-01T00:00:00.000Z', (counts) => ({
        ...entry('accounts.portal-sessions-ended', account),
        detail: { ...counts },
      }));
      assert.deepEqual(ended, { sessions: 1, links: 1 });
      assert.equal(await store.portal.findSession(`s2-${sequence}`, '2029-01-01T00:00:00.000Z'), undefined);
      assert.deepEqual(await store.portal.redeemLink(`open-${sequence}`, '2029-01-01T00:00:01.000Z'), { outcome: 'expired' }, 'voided');
      const log = await store.admin.listAudit(200, null);
      assert.deepEqual(log.items.find((item) => item.action === 'accounts.portal-sessions-ended' && item.target === account)?.detail, {
        sessions: 1,
        links: 1,
      });
    });

    it('writes no link, session or ending whose audit entry fails', async () => {
      const store = storeOf();
      const account = await newAccount();
      const link = { accountId: account, origin: 'o', expiresAt: '2030-01-01T00:00:00.000Z' };
      await assert.rejects(store.portal.createLink(`bad-${sequence}`, link, unwritable('accounts.portal-link', account)));
      assert.deepEqual(await store.portal.redeemLink(`bad-${sequence}`, '2029-01-01T00:00:00.000Z'), { outcome: 'unknown' });
      const session = { accountId: account, origin: 'o', csrf: 'c', expiresAt: '2030-01-01T00:00:00.000Z' };
      await assert.rejects(store.portal.createSession(`bad-${sequence}`, session, unwritable('portal.sign-in', account)));
      assert.equal(await store.portal.findSession(`bad-${sequence}`, '2029-01-01T00:00:00.000Z'), undefined);
      await store.portal.createSession(`kept-${sequence}`, session, entry('portal.sign-in', account));
      await assert.rejects(
        store.portal.endAccountSessions(account, '2029-01-01T00:00:00.000Z', () => unwritable('accounts.portal-sessions-ended', account)),
      );
      assert.deepEqual(await store.portal.findSession(`kept-${sequence}`, '2029-01-01T00:00:00.000Z'), session, 'not ended');
      assert.equal(await audited('accounts.portal-link', account), 0);
    });
  });

  describe('admin tokens', () => {
    it('creates, finds, lists and revokes tokens, each change with its audit entry; an entry that fails leaves no token and no revocation', async () => {
      const store = storeOf();
      const tokens = new AdminTokens(store.admin);
      const by = { actor: 'contract', requestId: null };
      const { token, record } = await tokens.create(`ops-${++sequence}`, ['keys:read'], by);
      assert.deepEqual(await tokens.check(`Bearer ${token}`), { outcome: 'ok', token: record });
      assert.ok((await store.admin.listTokens()).some((listed) => listed.id === record.id));
      assert.equal(await audited('tokens.create', record.id), 1);
      const failing = { ...by, action: 'x', target: 'x', detail: { n: 1n } };
      await assert.rejects(
        store.admin.createToken({ id: `tok_bad${sequence}`, tokenHash: `bad${sequence}`, name: 'bad', scopes: ['keys:read'] }, () => failing),
      );
      assert.equal(
        (await store.admin.listTokens()).some((listed) => listed.id === `tok_bad${sequence}`),
        false,
      );
      await assert.rejects(store.admin.revokeToken(record.id, failing));
      assert.equal((await tokens.check(`Bearer ${token}`)).outcome, 'ok', 'not revoked');
      assert.equal((await tokens.revoke(record.id, by))?.id, record.id);
      assert.equal((await tokens.check(`Bearer ${token}`)).outcome, 'unknown');
      assert.equal(await audited('tokens.revoke', record.id), 1);
      assert.equal(await tokens.revoke('tok_none', by), undefined);
      assert.equal(await audited('tokens.revoke', 'tok_none'), 0, 'nothing revoked, nothing audited');
    });
  });

  describe('webhook store', () => {
    it('creates, lists, replaces and deletes endpoints, audited; an entry that fails leaves the endpoint as it was', async () => {
      const store = storeOf();
      const id = `whep_contract${++sequence}`;
      const endpoint = { id, url: 'https://hooks.example/in', secret: 'whsec_x', events: null, createdAt: '2029-01-01T00:00:00.000Z' };
      await assert.rejects(store.webhooks.createEndpoint(endpoint, unwritable('webhooks.create', id)));
      assert.equal(
        (await store.webhooks.listEndpoints()).some((listed) => listed.id === id),
        false,
        'not created',
      );
      await store.webhooks.createEndpoint(endpoint, entry('webhooks.create', id));
      assert.deepEqual(
        (await store.webhooks.listEndpoints()).find((listed) => listed.id === id),
        endpoint,
      );
      await store.webhooks.putEndpoint({ ...endpoint, url: 'https://hooks.example/moved', events: ['credits.low'] });
      assert.equal((await store.webhooks.listEndpoints()).find((listed) => listed.id === id)?.url, 'https://hooks.example/moved');
      await assert.rejects(store.webhooks.deleteEndpoint(id, unwritable('webhooks.delete', id)));
      assert.ok(
        (await store.webhooks.listEndpoints()).some((listed) => listed.id === id),
        'not deleted',
      );
      assert.equal(await store.webhooks.deleteEndpoint(id, entry('webhooks.delete', id)), true);
      assert.equal(await store.webhooks.deleteEndpoint(id, entry('webhooks.delete', id)), false);
      assert.deepEqual([await audited('webhooks.create', id), await audited('webhooks.delete', id)], [1, 1]);
      assert.equal(await store.webhooks.retryDelivery('whd_none', '2029-01-01T00:00:00.000Z', entry('webhooks.retry', 'whd_none')), false);
      assert.equal(await audited('webhooks.retry', 'whd_none'), 0, 'nothing retried, nothing audited');
    });
  });
}
