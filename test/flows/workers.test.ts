import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { AccountAdmin } from '../../src/billing/account-admin.js';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { spawnServer } from '../support/child-server.js';
import { tempDir } from '../support/helper.js';

describe('serve --workers N', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('runs N processes on one port over one embedded store, with exact accounting, and stops them all on SIGTERM', async () => {
    const seed = new SqliteStore(dir.path);
    const { key } = await new KeyAdmin(seed.ledger).create(100, 'workers');
    await seed.close();

    const server = await spawnServer({ DATA_DIR: dir.path }, ['--workers', '2']);
    const agent = new Agent({ connections: 100 });
    try {
      const workers = execFileSync('pgrep', ['-P', String(server.child.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n');
      assert.equal(workers.length, 2);
      const statuses = await Promise.all(
        Array.from({ length: 400 }, () =>
          request(`${server.url}/document`, { dispatcher: agent, headers: { 'x-api-key': key, 'svc-doc-id': 'none' } }).then(async (response) => {
            await response.body.dump();
            return response.statusCode;
          }),
        ),
      );
      assert.equal(statuses.filter((status) => status === 404).length, 100);
      assert.equal(statuses.filter((status) => status === 402).length, 300);
    } finally {
      await agent.close();
      server.child.kill('SIGTERM');
    }
    assert.equal(await server.exited, 0);
    const check = new SqliteStore(dir.path);
    const record = (await new KeyAdmin(check.ledger, null, Date.now, true).find(key))!;
    assert.equal(record.balance, 0);
    assert.equal(await check.ledger.countCharges(record.id), 100);
    await check.close();
  });

  it('holds a spend cap exactly over two processes: 100 of 400 concurrent requests on a cap of 100 a day, the rest 429', async () => {
    const capped = tempDir();
    const seed = new SqliteStore(capped.path);
    const { key, record } = await new KeyAdmin(seed.ledger).create(1000, 'capped', null, { spendCaps: [{ credits: 100, interval: 'day' }] });
    await seed.close();
    const server = await spawnServer({ DATA_DIR: capped.path }, ['--workers', '2']);
    const agent = new Agent({ connections: 100 });
    try {
      const statuses = await Promise.all(
        Array.from({ length: 400 }, () =>
          request(`${server.url}/document`, { dispatcher: agent, headers: { 'x-api-key': key, 'svc-doc-id': 'none' } }).then(async (response) => {
            await response.body.dump();
            return response.statusCode;
          }),
        ),
      );
      assert.equal(statuses.filter((status) => status === 404).length, 100, 'charged, then no such document');
      assert.equal(statuses.filter((status) => status === 429).length, 300);
    } finally {
      await agent.close();
      server.child.kill('SIGTERM');
    }
    assert.equal(await server.exited, 0);
    const check = new SqliteStore(capped.path);
    try {
      assert.equal((await check.ledger.findKeyById(record.id))!.balance, 900);
      assert.equal(await check.ledger.countCharges(record.id), 100);
    } finally {
      await check.close();
      capped.remove();
    }
  });

  it('serves exactly 700 of 3,000 concurrent requests made with three keys of one account over two processes on 700 credits', async () => {
    const shared = tempDir();
    const seed = new SqliteStore(shared.path);
    const created = await new AccountAdmin(seed.ledger).create({ name: 'three keys', credits: 700 });
    const account = (created as { account: { id: string } }).account;
    const keys = new KeyAdmin(seed.ledger);
    const plain = await Promise.all([1, 2, 3].map(async () => ((await keys.createInAccount(account.id, 0)) as { key: string }).key));
    await seed.close();
    const server = await spawnServer({ DATA_DIR: shared.path }, ['--workers', '2']);
    const agent = new Agent({ connections: 100 });
    try {
      const statuses = await Promise.all(
        Array.from({ length: 3000 }, (_, index) =>
          request(`${server.url}/document`, { dispatcher: agent, headers: { 'x-api-key': plain[index % 3] as string, 'svc-doc-id': 'none' } }).then(
            async (response) => {
              await response.body.dump();
              return response.statusCode;
            },
          ),
        ),
      );
      assert.equal(statuses.filter((status) => status === 404).length, 700);
      assert.equal(statuses.filter((status) => status === 402).length, 2300);
    } finally {
      await agent.close();
      server.child.kill('SIGTERM');
    }
    assert.equal(await server.exited, 0);
    const check = new SqliteStore(shared.path);
    try {
      const ledger = (await check.ledger.auditLedger()).find((entry) => entry.accountId === account.id);
      assert.deepEqual(ledger, { accountId: account.id, granted: 700, charged: 700, expired: 0, balance: 0, consistent: true });
    } finally {
      await check.close();
      shared.remove();
    }
  });
});
