import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashApiKey } from '../../src/billing/keys.js';
import { MAX_BALANCE } from '../../src/billing/ledger.js';
import type { DocumentRecord } from '../../src/documents/document-store.js';
import { UnstorableValueError } from '../../src/platform/store-faults.js';
import type { IndexQuery } from '../../src/search/document-index.js';
import type { Store } from '../../src/store/store.js';
import { documentsOf, eventually, SAMPLE_DOCUMENTS } from '../support/helper.js';
import { ledgerReadsContract } from './ledger-reads-contract.js';
import { operatorStoresContract } from './operator-stores-contract.js';

/** The behaviour every Store implementation promises; run by each implementation's test file. */
export function storeContract(name: string, openStore: () => Promise<{ store: Store; cleanup: () => Promise<void> }>): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let sequence = 0;

    before(async () => {
      ({ store, cleanup } = await openStore());
      await store.documents.ingestDocuments(documentsOf(SAMPLE_DOCUMENTS));
    });
    after(async () => cleanup());
    operatorStoresContract(() => store);
    ledgerReadsContract(() => store);

    async function newKey(credits: number) {
      sequence++;
      const plain = sequence.toString(16).padStart(64, 'a');
      const record = await store.ledger.createKey({ keyHash: hashApiKey(plain), id: `key_${sequence}`, name: `k${sequence}`, credits });
      return { plain, hash: hashApiKey(plain), record };
    }

    const search = (request: Partial<IndexQuery> & { terms: string[] }) =>
      store.index.search({ field: { kind: 'all' }, filters: [], topK: 10, ...request });

    describe('keys', () => {
      it('creates a key findable by hash and by id, with its balance and a create grant', async () => {
        const { hash, record } = await newKey(7);
        assert.equal(record.balance, 7);
        assert.equal(record.status, 'active');
        assert.deepEqual(await store.ledger.findKeyByHash(hash), record);
        assert.deepEqual(await store.ledger.findKeyById(record.id), record);
        assert.deepEqual(
          (await store.ledger.listGrants(record.accountId)).map((grant) => [grant.amount, grant.reason]),
          [[7, 'create']],
        );
        assert.ok((await store.ledger.listKeys()).some((key) => key.id === record.id));
      });

      it('grants once per idempotency ref: a second top-up with the same ref adds nothing', async () => {
        const { record } = await newKey(1);
        assert.equal((await store.ledger.topUp(record.id, 4, { idempotencyRef: 'claim-topup-1' })).outcome, 'topped-up');
        const again = await store.ledger.topUp(record.id, 4, { idempotencyRef: 'claim-topup-1' });
        assert.deepEqual([again.outcome, again.outcome === 'granted-before' && again.key.balance], ['granted-before', 5]);
        assert.equal((await store.ledger.topUp(record.id, 4, { idempotencyRef: 'claim-topup-2' })).outcome, 'topped-up');
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, 9);
      });

      it('rolls a key to a new hash; the former hash is a retired key until its time, forgotten on a later roll', async () => {
        const { hash, record } = await newKey(3);
        const next = hashApiKey('b'.repeat(64));
        const rolled = await store.ledger.rollKey(record.id, next, '2026-01-01T00:01:00.000Z', '2026-01-01T00:00:00.000Z');
        assert.deepEqual(rolled, { outcome: 'rolled', key: record });
        assert.equal(await store.ledger.findKeyByHash(hash), undefined);
        assert.deepEqual(await store.ledger.findKeyByHash(next), record);
        assert.deepEqual(await store.ledger.findRetiredKey(hash), { key: record, keyHash: next, validUntil: '2026-01-01T00:01:00.000Z' });
        assert.equal((await store.ledger.debit(next, '/query')).outcome, 'charged');

        const last = hashApiKey('c'.repeat(64));
        await store.ledger.rollKey(record.id, last, null, '2026-01-01T00:02:00.000Z');
        assert.equal(await store.ledger.findRetiredKey(hash), undefined, 'past its time: forgotten');
        assert.equal(await store.ledger.findRetiredKey(next), undefined, 'rolled with no grace period');
        assert.deepEqual(await store.ledger.rollKey('key_none', last, null, '2026-01-01T00:00:00.000Z'), { outcome: 'not-found' });
        await store.ledger.setKeyStatus(record.id, 'revoked');
        assert.equal((await store.ledger.rollKey(record.id, hashApiKey('d'.repeat(64)), null, '2026-01-01T00:03:00.000Z')).outcome, 'revoked');
        assert.deepEqual(await store.ledger.findKeyByHash(last), { ...record, balance: 2, status: 'revoked' });
      });

      it('spends the soonest-expiring credits first; at its expiry what is left of a grant leaves the balance, once', async () => {
        const { hash, record } = await newKey(5);
        const [soon, later] = ['2030-01-01T00:00:00.000Z', '2030-02-01T00:00:00.000Z'];
        await store.ledger.topUp(record.id, 10, { expiresAt: later });
        await store.ledger.topUp(record.id, 4, { expiresAt: soon });
        assert.equal((await store.ledger.findKeyById(record.id))!.expiringGrants, 2);
        for (let spent = 0; spent < 6; spent++) assert.equal((await store.ledger.debit(hash, '/query')).outcome, 'charged');
        assert.deepEqual(
          await store.ledger.expiringCredits(record.accountId),
          [{ credits: 8, at: later }],
          'the 4 expiring soonest were spent first',
        );
        assert.deepEqual(await store.ledger.expireDue('2029-12-31T23:59:59.999Z', 100), []);
        assert.deepEqual(await store.ledger.expireDue(soon, 100), [], 'nothing was left of it');
        const expired = (await store.ledger.expireDue(later, 100)).filter((expiry) => expiry.accountId === record.accountId);
        assert.deepEqual(expired, [{ accountId: record.accountId, amount: 8, at: later, balance: 5 }]);
        assert.deepEqual(await store.ledger.expireDue(later, 100), [], 'once');
        const key = await store.ledger.findKeyById(record.id);
        assert.deepEqual([key!.balance, key!.expiringGrants], [5, 0]);
        const audit = (await store.ledger.auditLedger()).find((ledger) => ledger.accountId === record.accountId);
        assert.deepEqual(audit, { accountId: record.accountId, granted: 19, charged: 6, expired: 8, balance: 5, consistent: true });
        assert.deepEqual(
          (await store.ledger.listGrants(record.accountId)).map((grant) => grant.expiresAt),
          [null, later, soon],
        );
      });

      it('settles spending before each grant: a grant expiring sooner, added later, is not charged for what was spent before it', async () => {
        const { hash, record } = await newKey(3);
        const [first, second] = ['2031-02-01T00:00:00.000Z', '2031-01-01T00:00:00.000Z'];
        await store.ledger.topUp(record.id, 5, { expiresAt: first });
        for (let spent = 0; spent < 4; spent++) await store.ledger.debit(hash, '/query');
        await store.ledger.topUp(record.id, 5, { expiresAt: second });
        for (let spent = 0; spent < 2; spent++) await store.ledger.debit(hash, '/query');
        assert.deepEqual(await store.ledger.expiringCredits(record.accountId), [
          { credits: 3, at: second },
          { credits: 1, at: first },
        ]);
        const expired = (await store.ledger.expireDue(first, 100)).filter((expiry) => expiry.accountId === record.accountId);
        assert.deepEqual(
          expired.map((expiry) => [expiry.amount, expiry.balance]),
          [
            [3, 4],
            [1, 3],
          ],
        );
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, 3, 'the credits that never expire are all there');
        assert.equal((await store.ledger.auditLedger()).find((ledger) => ledger.accountId === record.accountId)?.consistent, true);
      });

      it('refills each period of a plan once, the first at once, only the current one after downtime; replace keeps top-ups', async () => {
        const { hash, record } = await newKey(0);
        const day = (n: number) => new Date(Date.parse('2032-01-01T00:00:00.000Z') + n * 86_400_000).toISOString();
        const set = await store.ledger.setRefill(record.id, { credits: 10, interval: 'day', mode: 'replace' }, day(0));
        assert.equal(set.outcome, 'set');
        assert.deepEqual(set.outcome === 'set' && set.rule, { credits: 10, interval: 'day', mode: 'replace', anchor: day(0), nextRefillAt: day(1) });
        await store.ledger.topUp(record.id, 5);
        for (let spent = 0; spent < 3; spent++) await store.ledger.debit(hash, '/query');
        const mine = <T extends { accountId: string }>(changes: T[]) => changes.filter((change) => change.accountId === record.accountId);
        assert.deepEqual(mine(await store.ledger.refillDue(day(0.5), 100)), [], 'period 0 was granted when the plan was set');

        // Day 1: what is left of day 0's 10 (7: the refill expires first, so it was spent first) leaves; 10 arrive.
        assert.deepEqual(
          mine(await store.ledger.expireDue(day(1), 100)).map((expiry) => expiry.amount),
          [7],
        );
        assert.deepEqual(mine(await store.ledger.refillDue(day(1), 100)), [{ accountId: record.accountId, credits: 10, planned: 10, balance: 15 }]);
        assert.deepEqual(mine(await store.ledger.refillDue(day(1), 100)), [], 'once per period');
        // Down for three days: day 4 is granted, days 2 and 3 are not.
        await store.ledger.expireDue(day(4.2), 100);
        assert.deepEqual(mine(await store.ledger.refillDue(day(4.2), 100)), [{ accountId: record.accountId, credits: 10, planned: 10, balance: 15 }]);
        assert.equal((await store.ledger.refillRule(record.accountId))?.nextRefillAt, day(5));
        assert.deepEqual(
          (await store.ledger.listGrants(record.accountId)).map((grant) => grant.reason),
          ['create', 'refill', 'topup', 'refill', 'refill'],
        );
        assert.equal((await store.ledger.auditLedger()).find((ledger) => ledger.accountId === record.accountId)?.consistent, true);

        const ended = await store.ledger.setRefill(record.id, null, day(4.5));
        assert.deepEqual(ended.outcome === 'set' && ended.rule, null);
        assert.deepEqual(mine(await store.ledger.refillDue(day(9), 100)), []);
        await store.ledger.setKeyStatus(record.id, 'revoked');
        assert.equal((await store.ledger.setRefill(record.id, { credits: 1, interval: 'day', mode: 'add' }, day(9))).outcome, 'revoked');
      });

      it('never grants twice in a period: the same plan again, another plan, or one ended and set again start after the period paid for', async () => {
        const { record } = await newKey(0);
        const at = (hours: number) => new Date(Date.parse('2033-03-01T00:00:00.000Z') + hours * 3_600_000).toISOString();
        const daily = { credits: 50, interval: 'day', mode: 'add' } as const;
        const first = await store.ledger.setRefill(record.id, daily, at(0));
        assert.deepEqual(first.outcome === 'set' && [first.refill?.credits, first.balance, first.changed], [50, 50, true]);
        const again = await store.ledger.setRefill(record.id, daily, at(1));
        assert.deepEqual(again.outcome === 'set' && [again.refill, again.balance, again.changed], [undefined, 50, false], 'the same plan: nothing');
        const bigger = await store.ledger.setRefill(record.id, { ...daily, credits: 80 }, at(2));
        assert.deepEqual(bigger.outcome === 'set' && [bigger.refill, bigger.balance, bigger.rule?.nextRefillAt], [undefined, 50, at(24)]);
        await store.ledger.setRefill(record.id, null, at(3));
        const anew = await store.ledger.setRefill(record.id, { ...daily, interval: 'week' }, at(4));
        assert.deepEqual(
          anew.outcome === 'set' && [anew.refill, anew.balance, anew.rule?.nextRefillAt],
          [undefined, 50, at(24)],
          'ended and set again',
        );
        assert.deepEqual(
          (await store.ledger.refillDue(at(24), 1000)).filter((refill) => refill.accountId === record.accountId),
          [{ accountId: record.accountId, credits: 50, planned: 50, balance: 100 }],
          'the new plan starts when the paid period ends',
        );
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, 100);
      });

      it('grants a refill only up to MAX_BALANCE, and says what it planned', async () => {
        const { record } = await newKey(MAX_BALANCE - 30);
        const set = await store.ledger.setRefill(record.id, { credits: 100, interval: 'day', mode: 'add' }, '2034-01-01T00:00:00.000Z');
        assert.deepEqual(set.outcome === 'set' && set.refill, { accountId: record.accountId, credits: 30, planned: 100, balance: MAX_BALANCE });
        const next = (await store.ledger.refillDue('2034-01-02T00:00:00.000Z', 1000)).filter((refill) => refill.accountId === record.accountId);
        assert.deepEqual(next, [{ accountId: record.accountId, credits: 0, planned: 100, balance: MAX_BALANCE }]);
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, MAX_BALANCE);
        assert.equal((await store.ledger.auditLedger()).find((ledger) => ledger.accountId === record.accountId)?.consistent, true);
      });

      it('writes a change, its audit entry and its claim together; a record that fails leaves nothing granted', async () => {
        const { record } = await newKey(1);
        const claim = await store.idempotency.claim({
          keyHash: 'admin',
          idempotencyKey: `contract-${record.id}`,
          fingerprint: 'f',
          lockMs: 60_000,
          ttlMs: 60_000,
        });
        assert.equal(claim.outcome, 'claimed');
        const entry = { keyHash: 'admin', idempotencyKey: `contract-${record.id}`, ref: (claim as { ref: string }).ref };
        const audited = (action: string) => ({ actor: 'contract', action, target: record.id, requestId: null, detail: {} });
        await assert.rejects(
          store.ledger.topUp(
            record.id,
            5,
            { idempotencyRef: entry.ref },
            {
              audit: () => audited('keys.topup'),
              claim: {
                entry,
                answer: () => {
                  throw new Error('injected: the answer cannot be written');
                },
              },
            },
          ),
          /injected/,
        );
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, 1, 'nothing granted');
        const answer = { status: 200, body: '{"ok":true}', contentType: 'application/json', creditsRemaining: null };
        const done = await store.ledger.topUp(
          record.id,
          5,
          { idempotencyRef: entry.ref },
          { audit: () => audited('keys.topup'), claim: { entry, answer: () => answer } },
        );
        assert.equal(done.outcome, 'topped-up');
        const replay = await store.idempotency.claim({
          keyHash: 'admin',
          idempotencyKey: entry.idempotencyKey,
          fingerprint: 'f',
          lockMs: 60_000,
          ttlMs: 60_000,
        });
        assert.deepEqual(replay, { outcome: 'replay', response: answer });
        await store.idempotency.release(entry);
        assert.equal(
          (await store.idempotency.claim({ keyHash: 'admin', idempotencyKey: entry.idempotencyKey, fingerprint: 'f', lockMs: 1, ttlMs: 1 })).outcome,
          'replay',
          'a completed claim is never released',
        );
        const log = await store.admin.listAudit(50, null);
        assert.equal(log.items.filter((item) => item.target === record.id && item.action === 'keys.topup').length, 1);
      });

      it('decides spend caps in the debit: a price that would pass a period is refused uncharged, credits.cap_reached once, and the next period starts anew', async () => {
        sequence++;
        const record = await store.ledger.createKey({
          keyHash: hashApiKey(sequence.toString(16).padStart(64, 'c')),
          id: `key_cap${sequence}`,
          name: 'capped',
          credits: 20,
          spendCaps: [
            { credits: 3, interval: 'day' },
            { credits: 5, interval: 'week' },
          ],
        });
        const monday = Date.parse('2036-06-02T10:00:00.000Z');
        const day = (n: number) => monday + n * 86_400_000;
        const outcomes = [];
        for (let attempt = 0; attempt < 5; attempt++) outcomes.push(await store.ledger.debitCapped(record.id, '/query', {}, day(0)));
        assert.deepEqual(
          outcomes.map((outcome) => outcome.outcome),
          ['charged', 'charged', 'charged', 'capped', 'capped'],
        );
        assert.deepEqual(outcomes[3], {
          outcome: 'capped',
          balance: 17,
          reached: { holder: 'key', cap: { credits: 3, interval: 'day' }, spent: 3, resetsAt: '2036-06-03T00:00:00.000Z' },
        });
        const nextDay = [
          await store.ledger.debitCapped(record.id, '/query', { cost: 2 }, day(1)),
          await store.ledger.debitCapped(record.id, '/query', {}, day(1)),
        ];
        assert.deepEqual(
          nextDay.map((outcome) => [outcome.outcome, outcome.outcome === 'capped' && outcome.reached.cap.interval]),
          [
            ['charged', false],
            ['capped', 'week'],
          ],
          'the week holds 5: 3 + 2',
        );
        const nextWeek = await store.ledger.debitCapped(record.id, '/query', {}, day(7));
        assert.equal(nextWeek.outcome, 'charged', 'a new ISO week');
        const key = (await store.ledger.findKeyById(record.id))!;
        assert.equal(key.balance, 20 - 3 - 2 - 1);
        assert.equal(await store.ledger.countCharges(record.id), 5);
        const capEvents = (await store.webhooks.listEvents(1000, record.id)).filter((event) => event.type === 'credits.cap_reached');
        assert.deepEqual(
          capEvents.map((event) => (event.data.cap as { interval: string }).interval).sort(),
          ['day', 'week'],
          'once per cap and period',
        );
        assert.equal((await store.ledger.auditLedger()).find((ledger) => ledger.accountId === record.accountId)?.consistent, true);
      });

      it('counts toward caps set now what the period spent before them, and the charges made by an instance that did not know of them yet', async () => {
        const { hash, record } = await newKey(100);
        for (let spent = 0; spent < 3; spent++) assert.equal((await store.ledger.debit(hash, '/query')).outcome, 'charged');
        await store.ledger.updateKeySettings(record.id, { spendCaps: [{ credits: 5, interval: 'day' }] });
        const capped = () => store.ledger.debitCapped(record.id, '/query', {}, Date.now());
        assert.deepEqual([(await capped()).outcome, (await capped()).outcome, (await capped()).outcome], ['charged', 'charged', 'capped']);
        const { key } = { key: (await store.ledger.findKeyById(record.id))! };
        await store.ledger.updateKeySettings(key.id, { spendCaps: [{ credits: 8, interval: 'day' }] });
        assert.equal((await capped()).outcome, 'charged', 'a raised cap: 6 of 8');
        // Through the uncapped path, as an instance whose copy of the key predates the caps debits it.
        for (let stale = 0; stale < 4; stale++) assert.equal((await store.ledger.debit(hash, '/query')).outcome, 'charged');
        const refused = await capped();
        assert.equal(refused.outcome, 'capped', 'the 4 served unknowing count: 10 of 8');
        assert.equal(refused.outcome === 'capped' && refused.reached.spent, 10);
        const [day] = await store.ledger.capSpend(record.id, [{ credits: 8, interval: 'day' }], Date.now());
        assert.equal(day?.spent, 10);
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, 100 - 10);
      });

      it("counts an account's spend by all its keys toward account caps set now", async () => {
        sequence++;
        const created = await store.ledger.createAccount({ id: `acct_caps${sequence}`, name: 'caps', credits: 50 });
        assert.equal(created.outcome, 'created');
        const accountId = created.outcome === 'created' ? created.account.id : '';
        const keys = await Promise.all(
          ['a', 'b'].map((letter) =>
            store.ledger.createKey({
              keyHash: hashApiKey(`${letter}${sequence}`.padStart(64, 'd')),
              id: `key_caps${letter}${sequence}`,
              name: letter,
              credits: 0,
              account: { accountId },
            }),
          ),
        );
        for (let spent = 0; spent < 3; spent++) await store.ledger.debit(hashApiKey(`a${sequence}`.padStart(64, 'd')), '/query');
        await store.ledger.updateAccount(accountId, { spendCaps: [{ credits: 4, interval: 'month' }] });
        const viaB = () => store.ledger.debitCapped(keys[1]!.id, '/query', {}, Date.now());
        assert.deepEqual([(await viaB()).outcome, (await viaB()).outcome], ['charged', 'capped']);
        assert.equal((await store.ledger.findAccount(accountId))!.balance, 46);
      });

      it("adds a plan's credits that roll over in add mode", async () => {
        const { record } = await newKey(1);
        const at = (days: number) => new Date(Date.parse('2033-03-01T00:00:00.000Z') + days * 86_400_000).toISOString();
        await store.ledger.setRefill(record.id, { credits: 4, interval: 'week', mode: 'add' }, at(0));
        await store.ledger.expireDue(at(7), 100);
        await store.ledger.refillDue(at(7), 100);
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, 9);
      });

      it('refuses NUL and unpaired surrogates in names, ids and metadata alike, naming the field and writing nothing', async () => {
        const refused = (field: string) => (error: unknown) => error instanceof UnstorableValueError && error.field === field;
        const accounts = (await store.ledger.listAccountsPage({ limit: 1000, cursor: null })).accounts.length;
        await assert.rejects(store.ledger.createAccount({ id: 'acct_lone', name: 'lone \ud800', credits: 5 }), refused('name'));
        await assert.rejects(
          store.ledger.createAccount({ id: 'acct_nul', name: 'ok', credits: 5, metadata: { note: 'a\u0000b' } }),
          refused('metadata'),
        );
        await assert.rejects(store.ledger.createAccount({ id: 'acct_key', name: 'ok', credits: 5, metadata: { '\udc00': 1 } }), refused('metadata'));
        await assert.rejects(store.ledger.createAccount({ id: 'acct_ext', name: 'ok', credits: 5, externalId: 'x\ud800' }), refused('external_id'));
        assert.equal((await store.ledger.listAccountsPage({ limit: 1000, cursor: null })).accounts.length, accounts);
        const { record } = await newKey(1);
        await assert.rejects(store.ledger.updateKeySettings(record.id, { metadata: { deep: ['\ud800'] } }), refused('metadata'));
        await assert.rejects(store.ledger.updateAccount(record.accountId, { name: 'bad \udfff' }), refused('name'));
        assert.deepEqual(await store.ledger.findKeyById(record.id), record);
        const emoji = await store.ledger.createAccount({ id: 'acct_emoji', name: 'Café 😀', credits: 0, metadata: { note: '𝄞' } });
        assert.equal(emoji.outcome === 'created' && emoji.account.name, 'Café 😀');
      });

      it('returns undefined for unknown keys', async () => {
        assert.equal(await store.ledger.findKeyByHash(hashApiKey('f'.repeat(64))), undefined);
        assert.equal(await store.ledger.findKeyById('key_none'), undefined);
        assert.deepEqual(await store.ledger.topUp('key_none', 5), { outcome: 'not-found' });
        assert.equal(await store.ledger.setKeyStatus('key_none', 'disabled'), undefined);
      });

      it('tops up and records the grant', async () => {
        const { record } = await newKey(1);
        const result = await store.ledger.topUp(record.id, 9);
        assert.equal(result.outcome === 'topped-up' && result.key.balance, 10);
        assert.deepEqual(
          (await store.ledger.listGrants(record.accountId)).map((grant) => grant.amount),
          [1, 9],
        );
      });

      it('refuses to top up a revoked key, or past MAX_BALANCE, granting nothing', async () => {
        const { record } = await newKey(MAX_BALANCE - 5);
        assert.equal((await store.ledger.topUp(record.id, 6)).outcome, 'over-limit');
        assert.equal((await store.ledger.topUp(record.id, 5)).outcome, 'topped-up');
        assert.equal((await store.ledger.topUp(record.id, 1)).outcome, 'over-limit');
        await store.ledger.setKeyStatus(record.id, 'revoked');
        assert.equal((await store.ledger.topUp(record.id, 1)).outcome, 'revoked');
        assert.deepEqual(
          (await store.ledger.listGrants(record.accountId)).map((grant) => grant.amount),
          [MAX_BALANCE - 5, 5],
        );
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, MAX_BALANCE);
      });

      it('disables and enables; a revoked key stays revoked', async () => {
        const { record } = await newKey(1);
        assert.equal((await store.ledger.setKeyStatus(record.id, 'disabled'))!.status, 'disabled');
        assert.equal((await store.ledger.setKeyStatus(record.id, 'active'))!.status, 'active');
        assert.equal((await store.ledger.setKeyStatus(record.id, 'revoked'))!.status, 'revoked');
        assert.equal((await store.ledger.setKeyStatus(record.id, 'active'))!.status, 'revoked');
      });
    });

    describe('debit', () => {
      it('spends one credit per call and records each charge', async () => {
        const { hash, record } = await newKey(2);
        const first = await store.ledger.debit(hash, '/query');
        assert.equal(first.outcome, 'charged');
        assert.equal(first.outcome === 'charged' && first.balance, 1);
        assert.equal((await store.ledger.debit(hash, '/document')).outcome, 'charged');
        assert.deepEqual(await store.ledger.debit(hash, '/document'), { outcome: 'no-credits' });
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, 0);
        assert.equal(await store.ledger.countCharges(record.id), 2);
        assert.deepEqual(
          (await store.ledger.listCharges(record.id)).map((charge) => charge.endpoint),
          ['/document', '/query'],
        );
      });

      it('tells unknown, disabled and revoked keys apart and charges none of them', async () => {
        assert.deepEqual(await store.ledger.debit(hashApiKey('e'.repeat(64)), '/query'), { outcome: 'unknown-key' });
        const { hash, record } = await newKey(5);
        await store.ledger.setKeyStatus(record.id, 'disabled');
        assert.deepEqual(await store.ledger.debit(hash, '/query'), { outcome: 'inactive', status: 'disabled' });
        await store.ledger.setKeyStatus(record.id, 'revoked');
        assert.deepEqual(await store.ledger.debit(hash, '/query'), { outcome: 'inactive', status: 'revoked' });
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, 5);
        assert.equal(await store.ledger.countCharges(record.id), 0);
      });

      it('serves exactly N debits for N credits under concurrency', async () => {
        const { hash, record } = await newKey(50);
        const results = await Promise.all(Array.from({ length: 200 }, () => store.ledger.debit(hash, '/query')));
        assert.equal(results.filter((result) => result.outcome === 'charged').length, 50);
        assert.equal(results.filter((result) => result.outcome === 'no-credits').length, 150);
        const balances = results.flatMap((result) => (result.outcome === 'charged' ? [result.balance] : []));
        assert.deepEqual(
          [...balances].sort((a, b) => a - b),
          Array.from({ length: 50 }, (_, index) => index),
        );
        assert.equal((await store.ledger.findKeyById(record.id))!.balance, 0);
        assert.equal(await store.ledger.countCharges(record.id), 50);
      });

      it('records the outcome status of a charge once', async () => {
        const { hash, record } = await newKey(1);
        const result = await store.ledger.debit(hash, '/document');
        assert.equal(result.outcome, 'charged');
        if (result.outcome !== 'charged') return;
        assert.equal((await store.ledger.listCharges(record.id))[0].outcomeStatus, null);
        store.ledger.recordOutcome(result.chargeId, 404);
        store.ledger.recordOutcome(result.chargeId, 200);
        await eventually(async () => assert.equal((await store.ledger.listCharges(record.id))[0].outcomeStatus, 404));
      });
    });

    describe('documents', () => {
      it('returns a document with its metadata', async () => {
        const document = await store.documents.getDocument('gdpr-17');
        assert.deepEqual(document, SAMPLE_DOCUMENTS[0]);
        assert.equal(await store.documents.getDocument('missing'), undefined);
        const { docId, title, text, metadata } = SAMPLE_DOCUMENTS[0];
        assert.deepEqual(JSON.parse((await store.documents.getDocumentJson('gdpr-17'))!), { doc_id: docId, title, text, ...metadata });
        assert.equal(await store.documents.getDocumentJson('missing'), undefined);
      });

      it('writes nothing from a source that fails part-way', async () => {
        const before = await store.documents.countDocuments();
        async function* failing(): AsyncGenerator<DocumentRecord> {
          yield { docId: 'partial-1', title: 'Partial', text: 'zebra', metadata: {} };
          throw new Error('bad record');
        }
        await assert.rejects(store.documents.ingestDocuments(failing()), /bad record/);
        assert.equal(await store.documents.countDocuments(), before);
        assert.equal(await store.documents.getDocument('partial-1'), undefined);
        assert.equal((await search({ terms: ['zebra'] })).total, 0);
      });

      it('replaces a re-ingested id in the document, the index and the filters', async () => {
        const original: DocumentRecord = { docId: 'replace-me', title: 'Walrus', text: 'tusks', metadata: { colour: 'grey' } };
        await store.documents.ingestDocuments(documentsOf([original]));
        assert.equal((await search({ terms: ['walrus'] })).total, 1);
        const replacement: DocumentRecord = { docId: 'replace-me', title: 'Narwhal', text: 'horn', metadata: { colour: 'white' } };
        assert.equal(await store.documents.ingestDocuments(documentsOf([replacement])), 1);
        assert.deepEqual(await store.documents.getDocument('replace-me'), replacement);
        assert.equal((await search({ terms: ['walrus'] })).total, 0);
        assert.equal((await search({ terms: ['narwhal'] })).total, 1);
        const grey = await search({ terms: ['narwhal'], filters: [{ field: 'colour', anyOf: ['grey'] }] });
        assert.equal(grey.total, 0);
        assert.equal(await store.documents.deleteDocument('replace-me'), true);
        assert.equal(await store.documents.deleteDocument('replace-me'), false);
        assert.equal((await search({ terms: ['narwhal'] })).total, 0);
      });
    });

    describe('search', () => {
      it('matches any term (OR), stems, and ranks by relevance', async () => {
        const result = await search({ terms: ['breaches'] });
        assert.deepEqual(result.hits.map((hit) => hit.docId).sort(), ['gdpr-33', 'guidance']);
        assert.equal(result.total, 2);
        const either = await search({ terms: ['overtime', 'erasure'] });
        assert.deepEqual(either.hits.map((hit) => hit.docId).sort(), ['flsa', 'gdpr-17']);
        for (let index = 1; index < either.hits.length; index++) {
          assert.ok(either.hits[index - 1].score >= either.hits[index].score);
        }
      });

      it('counts every match in total while returning at most topK', async () => {
        const result = await search({ terms: ['data', 'personal', 'breach'], topK: 1 });
        assert.equal(result.hits.length, 1);
        assert.ok(result.total >= 3, `total ${result.total}`);
      });

      it('filters by strict scalar equality, any-of lists, array fields, and ANDs fields', async () => {
        const ids = async (filters: IndexQuery['filters']) =>
          (await search({ terms: ['breach', 'data', 'personal', 'overtime', 'consumers'], filters })).hits.map((hit) => hit.docId).sort();
        assert.deepEqual(await ids([{ field: 'jurisdiction', anyOf: ['US'] }]), ['flsa']);
        assert.deepEqual(await ids([{ field: 'jurisdiction', anyOf: ['us'] }]), []);
        assert.deepEqual(await ids([{ field: 'jurisdiction', anyOf: ['US', 'US-CA'] }]), ['ccpa', 'flsa']);
        assert.deepEqual(await ids([{ field: 'jurisdiction', anyOf: [] }]), []);
        assert.deepEqual(await ids([{ field: 'year', anyOf: [2016] }]), ['gdpr-17', 'gdpr-33']);
        assert.deepEqual(await ids([{ field: 'year', anyOf: ['2016'] }]), ['guidance']);
        assert.deepEqual(await ids([{ field: 'binding', anyOf: [true] }]), ['ccpa', 'gdpr-17', 'gdpr-33']);
        assert.deepEqual(await ids([{ field: 'note', anyOf: [null] }]), ['guidance']);
        assert.deepEqual(await ids([{ field: 'tags', anyOf: ['breach'] }]), ['gdpr-33']);
        assert.deepEqual(
          await ids([
            { field: 'jurisdiction', anyOf: ['EU'] },
            { field: 'binding', anyOf: [true] },
          ]),
          ['gdpr-17', 'gdpr-33'],
        );
        assert.deepEqual(await ids([{ field: 'no_such_field', anyOf: ['x'] }]), []);
      });

      it('searches one field: title, text or a metadata field', async () => {
        const inTitle = await search({ terms: ['breach'], field: { kind: 'title' } });
        assert.deepEqual(inTitle.hits.map((hit) => hit.docId).sort(), ['gdpr-33', 'guidance']);
        const inText = await search({ terms: ['overtime'], field: { kind: 'text' } });
        assert.deepEqual(
          inText.hits.map((hit) => hit.docId),
          ['flsa'],
        );
        const inMetadata = await search({ terms: ['employment'], field: { kind: 'metadata', name: 'category' } });
        assert.deepEqual(
          inMetadata.hits.map((hit) => hit.docId),
          ['flsa'],
        );
        assert.equal(inMetadata.total, 1);
        assert.equal((await search({ terms: ['employment'], field: { kind: 'metadata', name: 'nothing' } })).total, 0);
      });

      it('treats every term as plain text, whatever characters it holds', async () => {
        for (const term of ['"', 'AND', 'NEAR', '*', 'a:b', '^x', '(', 'データ', 'x'.repeat(5000)]) {
          const result = await search({ terms: [term] });
          assert.equal(typeof result.total, 'number');
        }
      });
    });

    describe('rate limit settings', () => {
      it('creates a key with its own rate, changes it, and returns it to the default', async () => {
        sequence++;
        const plain = sequence.toString(16).padStart(64, 'b');
        const created = await store.ledger.createKey({ keyHash: hashApiKey(plain), id: `key_${sequence}`, name: '', credits: 1, rateLimit: 7 });
        assert.equal(created.rateLimit, 7);
        assert.equal((await store.ledger.findKeyById(created.id))!.rateLimit, 7);
        assert.equal((await store.ledger.setKeyRateLimit(created.id, 50))!.rateLimit, 50);
        assert.equal((await store.ledger.findKeyByHash(hashApiKey(plain)))!.rateLimit, 50);
        assert.equal((await store.ledger.setKeyRateLimit(created.id, null))!.rateLimit, null);
        assert.equal((await newKey(1)).record.rateLimit, null);
        assert.equal(await store.ledger.setKeyRateLimit('key_none', 5), undefined);
      });
    });

    describe('face gallery', () => {
      const face = (docId: string, seed: number) => ({
        docId,
        descriptor: Array.from({ length: 128 }, (_, index) => Math.fround(Math.sin(seed + index) / 4)),
        faceFile: `https://faces.example/${docId}.jpg`,
        attributes: seed % 2 ? { seed } : null,
        engine: 'engine-1',
      });

      it('enrolls, lists with descriptors intact, replaces by doc_id and removes; version() moves with every change', async () => {
        const versions = new Set([await store.faces.version()]);
        await store.faces.enroll([face('f-a', 1), face('f-b', 2)]);
        versions.add(await store.faces.version());
        const listed = (await store.faces.list()).filter((entry) => entry.docId.startsWith('f-'));
        assert.deepEqual(listed, [face('f-a', 1), face('f-b', 2)]);
        await store.faces.enroll([face('f-a', 3)]);
        versions.add(await store.faces.version());
        assert.deepEqual(
          (await store.faces.list()).find((entry) => entry.docId === 'f-a'),
          face('f-a', 3),
        );
        assert.equal(await store.faces.remove('f-b'), true);
        assert.equal(await store.faces.remove('f-b'), false);
        versions.add(await store.faces.version());
        assert.equal(versions.size, 4, 'each change gave a new version');
        assert.equal(await store.faces.version(), await store.faces.version(), 'and no change, none');
      });
    });

    describe('idempotency', () => {
      const response = { status: 200, body: '{"status":200,"x":1}', contentType: 'application/json; charset=utf-8', creditsRemaining: 4 };
      const claimOf = (keyHash: string, idempotencyKey: string, fingerprint = 'f1', lockMs = 30_000, ttlMs = 60_000) =>
        store.idempotency.claim({ keyHash, idempotencyKey, fingerprint, lockMs, ttlMs });

      it('claims a new key, refuses a concurrent repeat, replays the completed response, and refuses another request', async () => {
        const { hash } = await newKey(5);
        const first = await claimOf(hash, 'op-1');
        assert.equal(first.outcome, 'claimed');
        const ref = (first as { ref: string }).ref;
        assert.deepEqual(await claimOf(hash, 'op-1'), { outcome: 'in-progress' });
        assert.deepEqual(await claimOf(hash, 'op-1', 'f2'), { outcome: 'mismatch' });
        await store.idempotency.complete({ keyHash: hash, idempotencyKey: 'op-1', ref }, response);
        assert.deepEqual(await claimOf(hash, 'op-1'), { outcome: 'replay', response });
        assert.deepEqual(await claimOf(hash, 'op-1', 'f2'), { outcome: 'mismatch' });
      });

      it('scopes keys by API key: the same Idempotency-Key of another caller is a different entry', async () => {
        const a = await newKey(1);
        const b = await newKey(1);
        assert.equal((await claimOf(a.hash, 'shared')).outcome, 'claimed');
        assert.equal((await claimOf(b.hash, 'shared')).outcome, 'claimed');
      });

      it('forgets a released claim, so a retry runs afresh', async () => {
        const { hash } = await newKey(1);
        const first = (await claimOf(hash, 'op-2')) as { ref: string };
        await store.idempotency.release({ keyHash: hash, idempotencyKey: 'op-2', ref: first.ref });
        const again = await claimOf(hash, 'op-2', 'f-other');
        assert.equal(again.outcome, 'claimed');
        assert.notEqual((again as { ref: string }).ref, first.ref);
      });

      it('lets a retry take over a lapsed claim, telling it which charge the dead attempt made', async () => {
        const { hash } = await newKey(5);
        const unpaid = (await claimOf(hash, 'op-3', 'f1', 1)) as { ref: string };
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.deepEqual(await claimOf(hash, 'op-3'), { outcome: 'claimed', ref: unpaid.ref, chargeId: null });

        const paid = (await claimOf(hash, 'op-4', 'f1', 1)) as { ref: string };
        const debit = await store.ledger.debit(hash, '/query', { idempotencyRef: paid.ref });
        assert.equal(debit.outcome, 'charged');
        await new Promise((resolve) => setTimeout(resolve, 20));
        const takeover = await claimOf(hash, 'op-4');
        assert.deepEqual(takeover, { outcome: 'claimed', ref: paid.ref, chargeId: (debit as { chargeId: number }).chargeId });
      });

      it('starts afresh on an expired entry, and purges expired entries', async () => {
        const { hash } = await newKey(1);
        const first = (await claimOf(hash, 'op-5', 'f1', 1, 1)) as { ref: string };
        await store.idempotency.complete({ keyHash: hash, idempotencyKey: 'op-5', ref: first.ref }, response);
        await claimOf(hash, 'op-6', 'f1', 1, 1);
        await new Promise((resolve) => setTimeout(resolve, 20));
        const again = await claimOf(hash, 'op-5', 'f-new');
        assert.equal(again.outcome, 'claimed', 'an expired entry neither replays nor refuses another request');
        assert.ok((await store.idempotency.purgeExpired()) >= 1, 'op-6 was purged');
        assert.equal((await claimOf(hash, 'op-6', 'f-new')).outcome, 'claimed');
      });
    });

    it('audits every key: credits granted - charges recorded = balance', async () => {
      const { hash, record } = await newKey(5);
      await store.ledger.topUp(record.id, 3);
      await store.ledger.debit(hash, '/query');
      await store.ledger.debit(hash, '/document');
      const ledgers = await store.ledger.auditLedger();
      assert.deepEqual(
        ledgers.find((ledger) => ledger.accountId === record.accountId),
        { accountId: record.accountId, granted: 8, charged: 2, expired: 0, balance: 6, consistent: true },
      );
      for (const ledger of ledgers) {
        assert.equal(ledger.consistent, ledger.granted - ledger.charged - ledger.expired === ledger.balance, ledger.accountId);
      }
    });

    it('takes only whole requests from a batch of mixed prices: 1, 3, 3 on 6 credits leaves 2', async () => {
      const { hash, record } = await newKey(6);
      const results = await Promise.all([1, 3, 3].map((cost) => store.ledger.debit(hash, '/query', { cost })));
      assert.deepEqual(
        results.map((result) => result.outcome),
        ['charged', 'charged', 'no-credits'],
      );
      assert.equal((await store.ledger.findKeyById(record.id))?.balance, 2);
      assert.equal((await store.ledger.auditLedger()).find((ledger) => ledger.accountId === record.accountId)?.consistent, true);
    });

    it("spends an account's balance through any of its keys, in one batch, in arrival order, exactly", async () => {
      const accountId = `acct_shared${++sequence}`;
      assert.equal((await store.ledger.createAccount({ id: accountId, name: 'shared', credits: 5 })).outcome, 'created');
      const hashes: string[] = [];
      for (const credits of [0, 2, 0]) {
        sequence++;
        const plain = sequence.toString(16).padStart(64, 'b');
        const key = await store.ledger.createKey({ keyHash: hashApiKey(plain), id: `key_${sequence}`, name: '', credits, account: { accountId } });
        assert.equal(key.accountId, accountId);
        hashes.push(hashApiKey(plain));
      }
      const order = [0, 1, 2, 0, 1, 2, 0, 1, 2];
      const results = await Promise.all(order.map((index) => store.ledger.debit(hashes[index] as string, '/query')));
      assert.deepEqual(
        results.map((result) => result.outcome),
        ['charged', 'charged', 'charged', 'charged', 'charged', 'charged', 'charged', 'no-credits', 'no-credits'],
      );
      assert.deepEqual(
        results.map((result) => (result.outcome === 'charged' ? result.balance : null)),
        [6, 5, 4, 3, 2, 1, 0, null, null],
      );
      assert.equal((await store.ledger.findAccount(accountId))?.balance, 0);
      const audit = (await store.ledger.auditLedger()).find((ledger) => ledger.accountId === accountId);
      assert.deepEqual(audit, { accountId, granted: 7, charged: 7, expired: 0, balance: 0, consistent: true });
      const usage = await store.ledger.accountUsage(accountId, '1970-01-01T00:00:00.000Z', '9999-01-01T00:00:00.000Z');
      assert.deepEqual(usage.map((row) => row.charges).sort(), [2, 2, 3], 'each key charged for its own requests');
    });

    it('reports an idempotent request charged more than once, and only that', async () => {
      const { hash } = await newKey(5);
      await store.ledger.debit(hash, '/query', { idempotencyRef: `once-${sequence}` });
      await store.ledger.debit(hash, '/query', { idempotencyRef: `twice-${sequence}` });
      await store.ledger.debit(hash, '/query', { idempotencyRef: `twice-${sequence}` });
      const reported = await store.ledger.auditIdempotentCharges();
      assert.deepEqual(
        reported.filter((row) => row.ref.endsWith(`-${sequence}`)),
        [{ ref: `twice-${sequence}`, charges: 2 }],
      );
    });

    it('answers a ping', async () => {
      assert.equal(typeof (await store.ping()), 'number');
    });
  });
}
