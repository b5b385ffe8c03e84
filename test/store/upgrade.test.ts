import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { ADMIN_SCOPES, READ_SCOPES } from '../../src/admin/admin-scopes.js';
import { ownAccountId } from '../../src/billing/accounts.js';
import { hashApiKey } from '../../src/billing/keys.js';
import type { LedgerAudit } from '../../src/billing/ledger.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/helper.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES } from '../support/pg.js';

const FIXTURES = new URL('../fixtures/previous-release/', import.meta.url);

interface Expected {
  keys: Array<{ id: string; name: string; status: string; balance: number; plain: string | null }>;
  /** The release before accounts audited by key. */
  audit: Array<Omit<LedgerAudit, 'accountId'> & { keyId: string }>;
  expiring: Record<string, unknown>;
  refill: Record<string, unknown>;
  prices: Record<string, { prices: Record<string, number>; lowBalanceThreshold: number }>;
}

/**
 * A store the release before accounts made and populated (test/fixtures/previous-release) opened by
 * this one: every key is in an account of its own holding its balance, grants, expiring credits,
 * refill plan, prices and mark; the audit is the same, account for key; the keys still spend.
 */
async function assertUpgraded(store: Store, expected: Expected): Promise<void> {
  const audit = await store.ledger.auditLedger();
  assert.deepEqual(
    audit,
    expected.audit
      .map(({ keyId, ...ledger }) => ({ accountId: ownAccountId(keyId), ...ledger }))
      .sort((a, b) => a.accountId.localeCompare(b.accountId)),
    'the same ledger, account for key, every one consistent',
  );
  for (const key of expected.keys) {
    const now = await store.ledger.findKeyById(key.id);
    assert.deepEqual(now && { name: now.name, status: now.status, balance: now.balance, accountId: now.accountId }, {
      name: key.name,
      status: key.status,
      balance: key.balance,
      accountId: ownAccountId(key.id),
    });
    const account = await store.ledger.findAccount(ownAccountId(key.id));
    assert.deepEqual(account && [account.name, account.balance], [key.name, key.balance]);
  }
  for (const [keyId, credits] of Object.entries(expected.expiring))
    assert.deepEqual(await store.ledger.expiringCredits(ownAccountId(keyId)), credits);
  for (const [keyId, rule] of Object.entries(expected.refill)) assert.deepEqual(await store.ledger.refillRule(ownAccountId(keyId)), rule);
  for (const [keyId, settings] of Object.entries(expected.prices)) {
    const key = await store.ledger.findKeyById(keyId);
    assert.deepEqual(key && { prices: key.prices, lowBalanceThreshold: key.lowBalanceThreshold }, settings);
  }
  const events = await store.webhooks.listEvents(1000);
  assert.ok(events.length > 0);
  for (const event of events) assert.match(event.data.account_id, /^acct_/, `${event.type} names its account`);

  const [full, reader] = await Promise.all(
    ['full', 'reader'].map(async (name) => (await store.admin.listTokens()).find((token) => token.name === name)),
  );
  assert.deepEqual([full?.scopes, reader?.scopes], [[...ADMIN_SCOPES], [...READ_SCOPES]]);

  const active = expected.keys.find((key) => key.status === 'active' && key.balance > 10) as Expected['keys'][number];
  const charged = await store.ledger.debit(hashApiKey(active.plain as string), '/query');
  assert.equal(charged.outcome, 'charged', 'a key of the previous release still spends');
  const revoked = expected.keys.find((key) => key.status === 'revoked') as Expected['keys'][number];
  assert.equal((await store.ledger.findKeyById(revoked.id))?.status, 'revoked');
  assert.ok((await store.ledger.auditLedger()).every((ledger) => ledger.consistent));
}

const expectedOf = (name: string) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Expected;

describe('a store of the release before accounts, opened by this one', () => {
  it('on SQLite', async () => {
    const dir = tempDir();
    try {
      copyFileSync(new URL('ledger.sqlite', FIXTURES), join(dir.path, 'ledger.sqlite'));
      const store = new SqliteStore(dir.path);
      try {
        await assertUpgraded(store, expectedOf('sqlite-expected.json'));
      } finally {
        await store.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('on PostgreSQL', { skip: SKIP_POSTGRES }, async () => {
    const database = await createTestDatabase();
    try {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      await client.query(readFileSync(new URL('postgres.sql', FIXTURES), 'utf8'));
      await client.end();
      const store = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
      try {
        await assertUpgraded(store, expectedOf('postgres-expected.json'));
      } finally {
        await store.close();
      }
    } finally {
      await database.drop();
    }
  });
});
