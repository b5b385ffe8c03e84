import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { request } from 'undici';
import { hashApiKey } from '../../src/billing/keys.js';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { cli } from '../support/cli-helper.js';
import { tempDir } from '../support/helper.js';

describe('metered-search keys', () => {
  const dir = tempDir();
  const env = { DATA_DIR: dir.path };
  after(() => dir.remove());

  const create = async (credits: string, ...extra: string[]) => {
    const result = await cli(env, 'keys', 'create', '--credits', credits, '--json', ...extra);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as { key: string; id: string; accountId: string; balance: number };
  };

  it('create prints the key once with its id and balance; the id never looks like a key', async () => {
    const created = await create('25', '--name', 'alice');
    assert.match(created.key, /^[0-9a-f]{64}$/);
    assert.doesNotMatch(created.id, /^[0-9a-fA-F]{64}$/);
    assert.equal(created.balance, 25);
    const text = await cli(env, 'keys', 'create', '--credits', '0');
    assert.equal(text.code, 0);
    assert.match(text.stdout, /[0-9a-f]{64}/);
    assert.match(text.stdout, /0 credits/);
  });

  it('create takes an end and metadata, refusing an end in the past and metadata that is not a JSON object', async () => {
    const created = (await create('5', '--expires-at', '2099-01-01T00:00:00Z', '--metadata', '{"customer":"cus_7"}')) as unknown as {
      id: string;
      expiresAt: string;
    };
    assert.equal(created.expiresAt, '2099-01-01T00:00:00.000Z');
    const store = new SqliteStore(dir.path);
    try {
      assert.deepEqual((await store.ledger.findKeyById(created.id))?.metadata, { customer: 'cus_7' });
    } finally {
      await store.close();
    }
    const past = await cli(env, 'keys', 'create', '--credits', '1', '--expires-at', '2001-01-01T00:00:00Z');
    assert.match(past.stderr, /--expires-at must be later than now/);
    const list = await cli(env, 'keys', 'create', '--credits', '1', '--metadata', '[1]');
    assert.match(list.stderr, /--metadata must be a JSON object/);
  });

  it("caps sets a key's spend caps, --none removes them, and a cap without credits is refused", async () => {
    const created = await create('10');
    const capped = await cli(env, 'keys', 'caps', created.id, '--day', '5', '--month', '50');
    assert.equal(capped.code, 0, capped.stderr);
    assert.match(capped.stdout, /spend caps 5 a day, 50 a month/);
    const store = new SqliteStore(dir.path);
    try {
      assert.deepEqual((await store.ledger.findKeyById(created.id))?.spendCaps, [
        { credits: 5, interval: 'day' },
        { credits: 50, interval: 'month' },
      ]);
    } finally {
      await store.close();
    }
    assert.equal((await cli(env, 'keys', 'caps', created.id, '--none')).code, 0);
    assert.match((await cli(env, 'keys', 'caps', created.id)).stderr, /Give --day, --week or --month/);
    assert.match((await cli(env, 'keys', 'caps', created.id, '--day', '0')).stderr, /--credits must be an integer from 1/);
  });

  it('create refuses credits that are not an integer >= 0', async () => {
    for (const credits of ['-1', 'abc', '1.5', '']) {
      const result = await cli(env, 'keys', 'create', '--credits', credits);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /credits/);
    }
    assert.notEqual((await cli(env, 'keys', 'create')).code, 0);
  });

  it('topup by key or by id; refuses 0 credits and unknown keys', async () => {
    const created = await create('1');
    const byKey = await cli(env, 'keys', 'topup', created.key, '--credits', '4', '--json');
    assert.equal(JSON.parse(byKey.stdout).balance, 5);
    const byId = await cli(env, 'keys', 'topup', created.id, '--credits', '5');
    assert.match(byId.stdout, /balance 10/);
    const zero = await cli(env, 'keys', 'topup', created.id, '--credits', '0');
    assert.notEqual(zero.code, 0);
    const unknown = await cli(env, 'keys', 'topup', 'key_nope', '--credits', '1');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No key matches/);
  });

  it('roll prints a new key once; the old one works for the grace period; bad grace periods are refused', async () => {
    const created = await create('3');
    const rolled = await cli(env, 'keys', 'roll', created.id, '--grace-seconds', '0', '--json');
    assert.equal(rolled.code, 0, rolled.stderr);
    const { key, id, oldKeyValidUntil } = JSON.parse(rolled.stdout) as { key: string; id: string; oldKeyValidUntil: string | null };
    assert.deepEqual([id, oldKeyValidUntil], [created.id, null]);
    assert.match((await cli(env, 'keys', 'topup', created.key, '--credits', '1')).stderr, /No key matches/);
    assert.match((await cli(env, 'keys', 'topup', key, '--credits', '1')).stdout, /balance 4/);

    const text = await cli(env, 'keys', 'roll', key, '--grace-seconds', '3600');
    assert.match(text.stdout, /old key keeps working until \d{4}-\d\d-\d\dT/);
    assert.match(text.stdout, /New API key \(shown once, store it now\): [0-9a-f]{64}/);
    for (const grace of ['-1', '604801', 'soon']) {
      const refused = await cli(env, 'keys', 'roll', created.id, '--grace-seconds', grace);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /--grace-seconds must be an integer from 0 to 604800/);
    }
  });

  it('topup --expires-at grants credits that expire; a time that is past or not RFC 3339 is refused', async () => {
    const created = await create('1');
    const granted = await cli(env, 'keys', 'topup', created.id, '--credits', '5', '--expires-at', '2099-01-01T00:00:00Z', '--json');
    assert.equal(granted.code, 0, granted.stderr);
    assert.deepEqual([JSON.parse(granted.stdout).balance, JSON.parse(granted.stdout).expiringGrants], [6, 1]);
    const past = await cli(env, 'keys', 'topup', created.id, '--credits', '5', '--expires-at', '2001-01-01T00:00:00Z');
    assert.match(past.stderr, /--expires-at must be later than now/);
    const vague = await cli(env, 'keys', 'topup', created.id, '--credits', '5', '--expires-at', 'next week');
    assert.match(vague.stderr, /--expires-at must be an RFC 3339 time/);
    const usage = JSON.parse((await cli(env, 'keys', 'usage', created.id, '--json')).stdout);
    assert.equal(usage.key.balance, 6, 'the refused ones granted nothing');
  });

  it('refill sets a plan, granting its first period at once, and --off ends it; an incomplete plan is refused', async () => {
    const created = await create('0');
    const set = await cli(env, 'keys', 'refill', created.id, '--credits', '30', '--interval', 'week', '--mode', 'add', '--json');
    assert.equal(set.code, 0, set.stderr);
    const plan = JSON.parse(set.stdout);
    assert.deepEqual([plan.balance, plan.refill.credits, plan.refill.interval, plan.refill.mode], [30, 30, 'week', 'add']);
    assert.match((await cli(env, 'keys', 'refill', created.id, '--off')).stdout, /has no refill plan\. Balance 30\./);
    assert.match(
      (await cli(env, 'keys', 'refill', created.id, '--credits', '5', '--interval', 'week')).stderr,
      /needs --credits, --interval and --mode/,
    );
    assert.match(
      (await cli(env, 'keys', 'refill', created.id, '--credits', '5', '--interval', 'hour', '--mode', 'add')).stderr,
      /--interval must be/,
    );
  });

  it('disable and enable are reversible; revoke is permanent', async () => {
    const created = await create('1');
    assert.match((await cli(env, 'keys', 'disable', created.id)).stdout, /disabled/);
    assert.match((await cli(env, 'keys', 'enable', created.key)).stdout, /active/);
    assert.match((await cli(env, 'keys', 'revoke', created.id)).stdout, /revoked/);
    const enable = await cli(env, 'keys', 'enable', created.id);
    assert.equal(enable.code, 1);
    assert.match(enable.stderr, /revoked/);
  });

  it('bounds credits: a grant or a balance past 10^12 is refused with a clear error, granting nothing', async () => {
    const huge = await cli(env, 'keys', 'create', '--credits', '9007199254740991');
    assert.equal(huge.code, 1);
    assert.match(huge.stderr, /--credits must be an integer from 0 to 1000000000000/);
    const created = await create('999999999999');
    const over = await cli(env, 'keys', 'topup', created.id, '--credits', '2');
    assert.equal(over.code, 1);
    assert.match(over.stderr, /would pass the most an account may hold \(1000000000000\)\. Nothing was added/);
    assert.match((await cli(env, 'keys', 'topup', created.id, '--credits', '1')).stdout, /balance 1000000000000/);
    assert.equal((await cli(env, 'audit')).code, 0);
  });

  it('refuses to top up a revoked key; revoking it again says it already was', async () => {
    const created = await create('1');
    await cli(env, 'keys', 'revoke', created.id);
    const topup = await cli(env, 'keys', 'topup', created.id, '--credits', '5');
    assert.equal(topup.code, 1);
    assert.match(topup.stderr, /revoked.*cannot be topped up/);
    const again = await cli(env, 'keys', 'revoke', created.id);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /was already revoked; nothing changed/);
    assert.equal(JSON.parse((await cli(env, 'keys', 'revoke', created.id, '--json')).stdout).changed, false);
  });

  it('with --json, errors are JSON on stdout too, with a non-zero exit; a missing file is a sentence', async () => {
    for (const argv of [
      ['keys', 'topup', 'key_nope', '--credits', '1', '--json'],
      ['keys', 'create', '--credits', '-1', '--json'],
      ['ingest', `${dir.path}/missing.jsonl`, '--json'],
    ]) {
      const result = await cli(env, ...argv);
      assert.equal(result.code, 1, argv.join(' '));
      const parsed = JSON.parse(result.stdout) as { error: { message: string } };
      assert.equal(typeof parsed.error.message, 'string');
    }
    const missing = await cli(env, 'ingest', `${dir.path}/missing.jsonl`);
    assert.match(missing.stderr, /^error: The file .*missing\.jsonl does not exist\.\n$/);
  });

  it('audit judges the ledger in exact integers, past where doubles round', async () => {
    const created = await create('0');
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(`${dir.path}/ledger.sqlite`);
    // Three grants of 2^53 - 1 and a balance one short of their sum: in doubles the two are equal.
    const grant = db.prepare("INSERT INTO credit_grants (account_id, amount, reason, at) VALUES (?, 9007199254740991, 'topup', '2026-01-01')");
    for (let count = 0; count < 3; count++) grant.run(created.accountId);
    db.prepare('UPDATE accounts SET balance = 27021597764222972 WHERE id = ?').run(created.accountId);
    db.close();
    const report = await cli(env, 'audit', '--json');
    assert.equal(report.code, 1);
    assert.deepEqual(
      JSON.parse(report.stdout).differences.map((row: { accountId: string }) => row.accountId),
      [created.accountId],
    );
    const fix = new Database(`${dir.path}/ledger.sqlite`);
    fix.prepare('DELETE FROM credit_grants WHERE account_id = ? AND amount = 9007199254740991').run(created.accountId);
    fix.prepare('UPDATE accounts SET balance = 0 WHERE id = ?').run(created.accountId);
    fix.close();
  });

  it('list shows keys without their plain values', async () => {
    const created = await create('3', '--name', 'listed');
    const listed = await cli(env, 'keys', 'list', '--json');
    const keys = JSON.parse(listed.stdout) as Array<{ id: string; name: string; balance: number }>;
    assert.ok(keys.some((key) => key.id === created.id && key.name === 'listed' && key.balance === 3));
    assert.ok(!listed.stdout.includes(created.key));
    const text = await cli(env, 'keys', 'list');
    assert.match(text.stdout, /ID\s+ACCOUNT\s+NAME\s+STATUS\s+BALANCE/);
    assert.ok(!text.stdout.includes(created.key));
  });

  it('changes made while the service runs take effect on its next request; usage shows the charges', async () => {
    const created = await create('1');
    const server = await startServer(
      loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1', SEED_DEMO: 'false', LOG_LEVEL: 'silent', FACE_WORKERS: '0' }),
    );
    try {
      const call = () => request(`${server.url}/document`, { headers: { 'x-api-key': created.key, 'svc-doc-id': 'x' } });
      assert.equal((await call()).statusCode, 404);
      assert.equal((await call()).statusCode, 402);
      await cli(env, 'keys', 'topup', created.id, '--credits', '2');
      assert.equal((await call()).statusCode, 404);
      await cli(env, 'keys', 'revoke', created.id);
      assert.equal((await call()).statusCode, 403);
    } finally {
      await server.close();
    }
    const usage = JSON.parse((await cli(env, 'keys', 'usage', created.key, '--json')).stdout);
    assert.equal(usage.granted, 3);
    assert.equal(usage.charged, 2);
    assert.equal(usage.key.balance, 1);
    assert.deepEqual(
      usage.recentCharges.map((charge: { endpoint: string; outcomeStatus: number }) => [charge.endpoint, charge.outcomeStatus]),
      [
        ['/document', 404],
        ['/document', 404],
      ],
    );
    const text = await cli(env, 'keys', 'usage', created.id);
    assert.match(text.stdout, /granted: 3; charges recorded: 2; balance: 1/);
  });

  it('audit reports a consistent ledger, and names a key whose balance was tampered with', async () => {
    const created = await create('10');
    await cli(env, 'keys', 'topup', created.id, '--credits', '5');
    const clean = await cli(env, 'audit', '--json');
    assert.equal(clean.code, 0, clean.stderr);
    assert.equal(JSON.parse(clean.stdout).consistent, true);
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(`${dir.path}/ledger.sqlite`);
    db.prepare('UPDATE accounts SET balance = balance + 7 WHERE id = ?').run(created.accountId);
    db.close();
    const tampered = await cli(env, 'audit');
    assert.equal(tampered.code, 1);
    assert.match(tampered.stdout, new RegExp(`INCONSISTENT[\\s\\S]*${created.accountId}\\s+15\\s+0\\s+0\\s+15\\s+22`));
  });

  it('audit names an idempotent request that was charged twice', async () => {
    const created = await create('10');
    const store = new SqliteStore(dir.path);
    try {
      await store.ledger.debit(hashApiKey(created.key), '/query', { idempotencyRef: 'claim-ref-1' });
      assert.equal((await cli(env, 'audit', '--json')).code, 1, 'the ledger tampered with above is still off');
      await store.ledger.debit(hashApiKey(created.key), '/query', { idempotencyRef: 'claim-ref-1' });
    } finally {
      await store.close();
    }
    const report = await cli(env, 'audit');
    assert.equal(report.code, 1);
    assert.match(report.stdout, /1 idempotent requests were charged more than once:[\s\S]*claim-ref-1\s+2/);
  });
});
