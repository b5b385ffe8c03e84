import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { AccountAdmin } from '../../src/billing/account-admin.js';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { auditLedger } from '../../src/cli/commands/audit.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { type ChildServer, spawnServer } from '../support/child-server.js';
import { documentsOf, tempDir } from '../support/helper.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES, terminateConnections } from '../support/pg.js';
import { startReceiver } from '../support/webhook-receiver.js';

const STRIPE_SECRET = 'whsec_instances_test';
const WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

describe('many instances on one PostgreSQL', { skip: SKIP_POSTGRES }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: PostgresStore;
  let servers: ChildServer[] = [];
  let adminToken: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const agent = new Agent({ connections: 300 });
  // One data folder for the three, as on one machine: each keeps its search replica in a folder of its own there.
  const dataDir = tempDir();

  before(async () => {
    database = await createTestDatabase();
    receiver = await startReceiver([200]);
    admin = await PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS });
    adminToken = (await new AdminTokens(admin.admin).create('billing', false)).token;
    servers = await Promise.all(
      [1, 2, 3].map(() =>
        spawnServer({
          DATABASE_URL: database.url,
          DATA_DIR: dataDir.path,
          REPLICA_POLL_MS: '100',
          PG_POOL_MAX: '8',
          STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
          WEBHOOK_URL: receiver.url,
          WEBHOOK_SECRET: WEBHOOK_SECRET,
          LOW_BALANCE_THRESHOLD: '10',
        }),
      ),
    );
  });
  after(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
    await agent.close();
    await receiver.stop();
    await admin.close();
    await database.drop();
    dataDir.remove();
  });

  const billable = (server: ChildServer, key: string) =>
    request(`${server.url}/document`, { dispatcher: agent, headers: { 'x-api-key': key, 'svc-doc-id': 'shared-doc' } }).then(async (response) => {
      await response.body.dump();
      return response.statusCode;
    });

  it('serves exactly 700 of 3,000 concurrent billable requests spread over 3 instances on 700 credits', async () => {
    const { key, record } = await new KeyAdmin(admin.ledger).create(700, 'shared');
    const statuses = await Promise.all(Array.from({ length: 3000 }, (_, index) => billable(servers[index % 3], key)));
    const served = statuses.filter((status) => status === 200 || status === 404).length;
    assert.equal(served, 700);
    assert.equal(statuses.filter((status) => status === 402).length, 2300);
    assert.equal((await admin.ledger.findKeyById(record.id))!.balance, 0);
    assert.equal(await admin.ledger.countCharges(record.id), 700);
  });

  it('serves exactly 700 of 3,000 concurrent requests made with three keys of one account over 3 instances on 700 credits', async () => {
    const created = await new AccountAdmin(admin.ledger).create({ name: 'three keys', credits: 700 });
    const account = (created as { account: { id: string } }).account;
    const keys = new KeyAdmin(admin.ledger);
    const plain = await Promise.all([1, 2, 3].map(async () => ((await keys.createInAccount(account.id, 0)) as { key: string }).key));
    const statuses = await Promise.all(
      Array.from({ length: 3000 }, (_, index) => billable(servers[index % 3], plain[Math.floor(index / 3) % 3] as string)),
    );
    assert.equal(statuses.filter((status) => status === 200 || status === 404).length, 700);
    assert.equal(statuses.filter((status) => status === 402).length, 2300);
    assert.equal((await admin.ledger.findAccount(account.id))!.balance, 0);
    const ledger = (await admin.ledger.auditLedger()).find((entry) => entry.accountId === account.id);
    assert.deepEqual(ledger, { accountId: account.id, granted: 700, charged: 700, expired: 0, balance: 0, consistent: true });
  });

  it("holds an account's cap of 100 a day exactly: 100 of 3,000 concurrent requests over three keys and instances, the rest 429", async () => {
    const created = await new AccountAdmin(admin.ledger).create({ name: 'capped', credits: 1000, spendCaps: [{ credits: 100, interval: 'day' }] });
    const account = (created as { account: { id: string } }).account;
    const keys = new KeyAdmin(admin.ledger);
    const plain = await Promise.all([1, 2, 3].map(async () => ((await keys.createInAccount(account.id, 0)) as { key: string }).key));
    const statuses = await Promise.all(
      Array.from({ length: 3000 }, (_, index) => billable(servers[index % 3], plain[Math.floor(index / 3) % 3] as string)),
    );
    assert.equal(statuses.filter((status) => status === 200 || status === 404).length, 100);
    assert.equal(statuses.filter((status) => status === 429).length, 2900);
    assert.equal((await admin.ledger.findAccount(account.id))!.balance, 900);
    const charged = (await admin.ledger.accountUsage(account.id, '1970-01-01T00:00:00.000Z', '9999-12-31T00:00:00.000Z')).reduce(
      (sum, row) => sum + row.charges,
      0,
    );
    assert.equal(charged, 100, 'the refused requests were not charged');
  });

  it('counts a cap set on one instance against what every instance served before and just after: once reached, nothing more anywhere', async () => {
    const { key, record } = await new KeyAdmin(admin.ledger).create(1000, 'capped later');
    // Spent before the cap, and every instance knows the key (without caps) from its last second.
    const before = await Promise.all(Array.from({ length: 30 }, (_, index) => billable(servers[index % 3], key)));
    assert.equal(before.filter((status) => status === 404).length, 30);
    const patched = await request(`${servers[0]?.url}/admin/keys/${record.id}`, {
      dispatcher: agent,
      method: 'PATCH',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ spend_caps: [{ credits: 35, interval: 'day' }] }),
    });
    assert.equal(patched.statusCode, 200, await patched.body.text());
    // The second after the PATCH: the other instances may still serve from their copy of the key.
    const soon = await Promise.all(Array.from({ length: 60 }, (_, index) => billable(servers[1 + (index % 2)], key)));
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const later = await Promise.all(Array.from({ length: 60 }, (_, index) => billable(servers[index % 3], key)));
    assert.deepEqual([...new Set(later)], [429], 'once the cap is reached, no instance serves more');
    const servedSoon = soon.filter((status) => status === 404).length;
    const charged = await admin.ledger.countCharges(record.id);
    assert.equal(charged, 30 + servedSoon);
    assert.ok(charged <= 35 || servedSoon > 5, 'past the cap only by what was served in the second after it was set');
    const [day] = await admin.ledger.capSpend(record.id, [{ credits: 35, interval: 'day' }], Date.now());
    assert.equal(day?.spent, charged, 'every charge of the period counts toward the cap');
  });

  it('applies a top-up or revoke made through any connection on every instance at the next request', async () => {
    const { key, record } = await new KeyAdmin(admin.ledger).create(0, 'changes');
    for (const server of servers) assert.equal(await billable(server, key), 402);
    await admin.ledger.topUp(record.id, 3);
    for (const server of servers) assert.equal(await billable(server, key), 404);
    await admin.ledger.topUp(record.id, 3);
    await admin.ledger.setKeyStatus(record.id, 'revoked');
    for (const server of servers) assert.equal(await billable(server, key), 403);
  });

  it('charges an idempotent request once across instances: 30 concurrent attempts over 3 instances, one charge', async () => {
    const { key, record } = await new KeyAdmin(admin.ledger).create(10, 'idempotent');
    const attempt = (server: ChildServer) =>
      request(`${server.url}/query`, {
        dispatcher: agent,
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': 'pay-once' },
        body: '{"query":"shared"}',
      }).then(async (response) => {
        await response.body.dump();
        return { status: response.statusCode, replayed: response.headers['idempotent-replayed'] === 'true' };
      });
    const answers = await Promise.all(Array.from({ length: 30 }, (_, index) => attempt(servers[index % 3])));
    assert.ok(
      answers.every((answer) => answer.status === 200 || answer.status === 409),
      JSON.stringify(answers),
    );
    const later = await Promise.all(servers.map((server) => attempt(server)));
    assert.deepEqual(
      later,
      servers.map(() => ({ status: 200, replayed: true })),
      'every instance replays the stored answer',
    );
    assert.equal(await admin.ledger.countCharges(record.id), 1);
    assert.equal((await admin.ledger.findKeyById(record.id))!.balance, 9);
  });

  it('makes a document ingested anywhere searchable on every instance within one second', async () => {
    const { key } = await new KeyAdmin(admin.ledger).create(100, 'search');
    await admin.documents.ingestDocuments(
      documentsOf([{ docId: 'shared-doc', title: 'Quokka habitat', text: 'Rottnest island quokkas', metadata: { region: 'AU' } }]),
    );
    const started = Date.now();
    for (const server of servers) {
      for (;;) {
        const response = await request(`${server.url}/query`, {
          dispatcher: agent,
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'quokka', filters: { region: 'AU' } }),
        });
        const body = (await response.body.json()) as { resp: { body: { hits: { total: number } } } };
        if (body.resp.body.hits.total === 1) break;
        assert.ok(Date.now() - started < 1000, 'visible within one second');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  });

  const adminCall = async (server: ChildServer, url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const response = await request(`${server.url}${url}`, {
      dispatcher: agent,
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(payload),
    });
    return { status: response.statusCode, body: (await response.body.json()) as Record<string, any> };
  };

  it('rolls a key on one instance: the old key works on every instance until the grace period ends, then 401 on all', async () => {
    const { key: oldKey, record } = await new KeyAdmin(admin.ledger).create(100, 'rolled');
    // Each instance has the old key in memory before the roll. Served: 200, or 404 before the document exists.
    const served = async (server: ChildServer, key: string) => [200, 404].includes(await billable(server, key));
    for (const server of servers) assert.ok(await served(server, oldKey));
    const rolledAt = Date.now();
    const rolled = await adminCall(servers[0], `/admin/keys/${record.id}/roll`, { grace_seconds: 3 });
    assert.equal(rolled.status, 200);
    for (const server of servers) {
      assert.ok(await served(server, oldKey), 'old key inside the grace period');
      assert.ok(await served(server, rolled.body.key), 'new key');
    }
    assert.ok(Date.now() - rolledAt < 3000, 'checked inside the grace period');
    await new Promise((resolve) => setTimeout(resolve, rolledAt + 3100 - Date.now()));
    for (const server of servers) {
      assert.equal(await billable(server, oldKey), 401, 'old key after the grace period');
      assert.ok(await served(server, rolled.body.key));
    }
    assert.equal((await admin.ledger.findKeyById(record.id))!.balance, 100 - 12);
  });

  it('grants once when a top-up is retried on two instances at once with one Idempotency-Key', async () => {
    const { record } = await new KeyAdmin(admin.ledger).create(1, 'paid');
    const topUp = (server: ChildServer) => adminCall(server, `/admin/keys/${record.id}/topup`, { credits: 50 }, { 'idempotency-key': 'invoice-77' });
    const first = await Promise.all(Array.from({ length: 10 }, (_, index) => topUp(servers[index % 2]!)));
    assert.ok(
      first.every((answer) => answer.status === 200 || answer.status === 409),
      JSON.stringify(first),
    );
    for (const server of servers) assert.deepEqual((await topUp(server)).body, { id: record.id, balance: 51 });
    assert.equal((await admin.ledger.findKeyById(record.id))!.balance, 51);
    assert.equal((await admin.ledger.listGrants(record.accountId)).length, 2, 'the creation and one top-up');
  });

  it('credits a Stripe event delivered to all three instances at once exactly once', async () => {
    const { record } = await new KeyAdmin(admin.ledger).create(0, 'stripe');
    const body = JSON.stringify({
      id: 'evt_everywhere',
      type: 'checkout.session.completed',
      data: { object: { payment_status: 'paid', client_reference_id: record.id, metadata: { credits: '40' } } },
    });
    const at = Math.floor(Date.now() / 1000);
    const signature = `t=${at},v1=${createHmac('sha256', STRIPE_SECRET).update(`${at}.${body}`).digest('hex')}`;
    const deliver = (server: ChildServer) =>
      request(`${server.url}/billing/stripe/webhook`, {
        dispatcher: agent,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': signature },
        body,
      }).then(async (response) => ({ status: response.statusCode, body: (await response.body.json()) as { outcome: string } }));
    const answers = await Promise.all([...servers, ...servers].map(deliver));
    assert.ok(
      answers.every((answer) => answer.status === 200),
      JSON.stringify(answers),
    );
    assert.deepEqual(answers.map((answer) => answer.body.outcome).sort(), [
      'credited',
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
    ]);
    assert.equal((await admin.ledger.findKeyById(record.id))!.balance, 40);
  });

  it('sends one credits.low and one credits.depleted, signed, when a burst over three instances crosses the marks', async () => {
    const { key, record } = await new KeyAdmin(admin.ledger).create(100, 'marks');
    const statuses = await Promise.all(Array.from({ length: 300 }, (_, index) => billable(servers[index % 3]!, key)));
    assert.equal(statuses.filter((status) => status === 402).length, 200);
    const ofKey = () =>
      receiver.received.map((received) => ({ received, event: JSON.parse(received.body) })).filter(({ event }) => event.data.key_id === record.id);
    const deadline = Date.now() + 5000;
    while (ofKey().length < 2) {
      assert.ok(Date.now() < deadline, 'delivered within seconds');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const events = ofKey();
    assert.deepEqual(events.map(({ event }) => event.type).sort(), ['credits.depleted', 'credits.low']);
    const signingKey = Buffer.from(WEBHOOK_SECRET.slice('whsec_'.length), 'base64');
    for (const { received } of events) {
      const signed = `${received.headers['webhook-id']}.${received.headers['webhook-timestamp']}.${received.body}`;
      assert.equal(received.headers['webhook-signature'], `v1,${createHmac('sha256', signingKey).update(signed).digest('base64')}`);
    }
  });

  it('keeps the ledger exact when PostgreSQL drops every connection mid-burst, answers 503 meanwhile, and recovers alone', async () => {
    const STARTING = 100_000;
    const { key, record } = await new KeyAdmin(admin.ledger).create(STARTING, 'faults');
    const seen = new Map<number, number>();
    let stop = false;
    const worker = async (server: ChildServer) => {
      while (!stop) {
        const status = await billable(server, key).catch(() => -1);
        seen.set(status, (seen.get(status) ?? 0) + 1);
      }
    };
    const workers = servers.flatMap((server) => Array.from({ length: 20 }, () => worker(server)));
    for (let round = 0; round < 5; round++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      await terminateConnections(database.name);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop = true;
    await Promise.all(workers);

    const unexpected = [...seen.keys()].filter((status) => ![200, 503].includes(status));
    assert.deepEqual(unexpected, [], `only 200 (served) and 503 (store away): ${JSON.stringify([...seen])}`);
    assert.ok((seen.get(503) ?? 0) > 0, 'the fault was seen');
    for (const server of servers) assert.equal(await billable(server, key), 200, 'recovered without a restart');
    const balance = (await admin.ledger.findKeyById(record.id))!.balance;
    const charges = await admin.ledger.countCharges(record.id);
    assert.equal(balance + charges, STARTING, `balance ${balance} + charges ${charges}`);
    assert.equal((await auditLedger(admin)).consistent, true, 'metered-search audit finds every key consistent');
    assert.ok((seen.get(200) ?? 0) > 0);
  });

  it('keeps the ledger exact when instances are killed with SIGKILL mid-burst', async () => {
    const STARTING = 100_000;
    const { key, record } = await new KeyAdmin(admin.ledger).create(STARTING, 'kill-9');
    let stop = false;
    let served = 0;
    const worker = async (server: ChildServer) => {
      while (!stop) {
        const status = await billable(server, key).catch(() => -1);
        if (status === -1) return;
        if (status === 200) served++;
      }
    };
    const workers = servers.flatMap((server) => Array.from({ length: 20 }, () => worker(server)));
    while (served < 500) await new Promise((resolve) => setTimeout(resolve, 10));
    const [survivor, ...victims] = servers;
    for (const victim of victims) victim!.child.kill('SIGKILL');
    await Promise.all(victims.map((victim) => victim!.exited));
    await new Promise((resolve) => setTimeout(resolve, 200));
    stop = true;
    await Promise.all(workers);

    assert.equal(await billable(survivor!, key), 200, 'the surviving instance serves on');
    const balance = (await admin.ledger.findKeyById(record.id))!.balance;
    const charges = await admin.ledger.countCharges(record.id);
    assert.equal(balance + charges, STARTING, `balance ${balance} + charges ${charges}`);
    assert.ok(charges >= served, `every served request was recorded (${served} served, ${charges} recorded)`);
    assert.equal((await auditLedger(admin)).consistent, true);
  });
});
