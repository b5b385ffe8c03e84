import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { hashApiKey } from '../../src/billing/keys.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { cli } from '../support/cli-helper.js';
import { tempDir } from '../support/helper.js';

describe('metered-search accounts', () => {
  const dir = tempDir();
  const env = { DATA_DIR: dir.path };
  after(() => dir.remove());
  const run = async (...argv: string[]) => {
    const result = await cli(env, ...argv);
    assert.equal(result.code, 0, result.stderr);
    return result;
  };
  const json = async (...argv: string[]) => JSON.parse((await run(...argv, '--json')).stdout);

  it('creates an account, keys that share its balance, tops it up, caps it and shows it', async () => {
    const account = await json('accounts', 'create', '--name', 'Acme', '--external-id', 'cus_42', '--credits', '10', '--metadata', '{"plan":"pro"}');
    assert.match(account.id, /^acct_[0-9a-f]{16}$/);
    assert.deepEqual([account.name, account.externalId, account.balance, account.metadata], ['Acme', 'cus_42', 10, { plan: 'pro' }]);
    const production = await json('keys', 'create', '--account', account.id, '--name', 'production');
    const staging = await json('keys', 'create', '--account', account.id, '--name', 'staging', '--credits', '5');
    assert.deepEqual([production.accountId, staging.accountId, staging.balance], [account.id, account.id, 15]);

    const store = new SqliteStore(dir.path);
    try {
      assert.equal((await store.ledger.debit(hashApiKey(production.key), '/query')).outcome, 'charged');
      assert.equal((await store.ledger.debit(hashApiKey(staging.key), '/query')).outcome, 'charged');
    } finally {
      await store.close();
    }
    assert.equal((await json('accounts', 'topup', account.id, '--credits', '7')).balance, 20);
    assert.deepEqual((await json('accounts', 'caps', account.id, '--day', '50')).spendCaps, [{ credits: 50, interval: 'day' }]);
    const refill = await json('accounts', 'refill', account.id, '--credits', '100', '--interval', 'month', '--mode', 'add');
    assert.deepEqual([refill.balance, refill.refill.credits], [120, 100]);

    const shown = await json('accounts', 'show', account.id);
    assert.deepEqual(
      shown.keys.map((key: { name: string; balance: number }) => [key.name, key.balance]),
      [
        ['production', 120],
        ['staging', 120],
      ],
    );
    assert.equal(
      shown.usage.reduce((sum: number, row: { charges: number }) => sum + row.charges, 0),
      2,
    );
    const text = (await run('accounts', 'show', account.id)).stdout;
    assert.match(text, /Account acct_[0-9a-f]{16} \(Acme\) holds its keys' balance: balance 120, external id cus_42, spend caps 50 a day\./);
    assert.match(text, /production[\s\S]*staging/);

    const found = await json('accounts', 'list', '--external-id', 'cus_42');
    assert.deepEqual(
      found.map((entry: { id: string }) => entry.id),
      [account.id],
    );
    assert.match((await run('accounts', 'list')).stdout, /ID\s+NAME\s+EXTERNAL ID\s+BALANCE/);
    const audit = await run('audit');
    assert.match(audit.stdout, /Ledger consistent: \d+ accounts/);
  });

  it('refuses an external id taken, an unknown account and a name with control characters, with a message', async () => {
    await run('accounts', 'create', '--name', 'First', '--external-id', 'cus_dup');
    const taken = await cli(env, 'accounts', 'create', '--name', 'Second', '--external-id', 'cus_dup');
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /has external id "cus_dup" already/);
    const unknown = await cli(env, 'keys', 'create', '--account', 'acct_0000000000000000');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No account has id "acct_0000000000000000"/);
    const topup = await cli(env, 'accounts', 'topup', 'acct_0000000000000000', '--credits', '1');
    assert.match(topup.stderr, /No account has id/);
    const control = await cli(env, 'accounts', 'create', '--name', 'a\u001bb');
    assert.equal(control.code, 1);
    const missing = await cli(env, 'keys', 'create', '--name', 'orphan');
    assert.match(missing.stderr, /--credits is required/);
  });
});
