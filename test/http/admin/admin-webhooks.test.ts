import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { ownAccountId } from '../../../src/billing/accounts.js';
import { WebhookSender } from '../../../src/webhooks/webhook-sender.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';
import { type Received, startReceiver } from '../../support/webhook-receiver.js';

/** The Standard Webhooks signature, computed here from the specification. */
function expectedSignature(secret: string, received: Received): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = `${received.headers['webhook-id']}.${received.headers['webhook-timestamp']}.${received.body}`;
  return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
}

describe('admin API: webhooks', () => {
  let context: TestContext;
  let authorization: string;
  let now = Date.parse('2026-06-01T08:00:00.000Z');
  const clock = () => now;
  before(async () => {
    context = await createTestApp({ clock });
    authorization = `Bearer ${(await new AdminTokens(context.store.admin).create('ops', false)).token}`;
  });
  after(async () => context.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    context.app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const sender = () => new WebhookSender(context.store.webhooks, clock, { timeoutMs: 300, allowLinkLocal: false });

  it('delivers a signed event to an endpoint that fails, hangs, then answers: once, every attempt recorded', async () => {
    const receiver = await startReceiver([500, 'hang', 200]);
    try {
      const endpoint = json(await call('POST', '/admin/webhooks', { url: receiver.url, events: ['credits.granted'] }));
      assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      const key = json(await call('POST', '/admin/keys', { credits: 1 }));
      await call('POST', `/admin/keys/${key.id}/topup`, { credits: 10 });

      await sender().runOnce();
      assert.equal(receiver.received.length, 1);
      await sender().runOnce();
      assert.equal(receiver.received.length, 1, 'not before its retry time');
      now += 5_000;
      await sender().runOnce();
      assert.equal(receiver.received.length, 2, 'the first retry, 5 s later');
      now += 30_000;
      await sender().runOnce();
      assert.equal(receiver.received.length, 3);
      now += 86_400_000;
      await sender().runOnce();
      assert.equal(receiver.received.length, 3, 'delivered once');

      const ids = new Set(receiver.received.map((received) => received.headers['webhook-id']));
      assert.equal(ids.size, 1, 'the same webhook-id on every attempt');
      for (const received of receiver.received) {
        assert.equal(received.headers['webhook-signature'], expectedSignature(endpoint.secret, received));
        assert.equal(received.headers['content-type'], 'application/json');
      }
      const event = JSON.parse(receiver.received[2]!.body);
      assert.deepEqual(
        { ...event, created_at: typeof event.created_at },
        {
          id: [...ids][0],
          type: 'credits.granted',
          created_at: 'string',
          data: { account_id: ownAccountId(key.id), key_id: key.id, balance: 11, credits: 10, expires_at: null },
        },
      );

      const { deliveries } = json(await call('GET', '/admin/webhooks/deliveries'));
      const delivery = deliveries.find((candidate: { event_id: string }) => candidate.event_id === event.id);
      assert.deepEqual(
        [delivery.state, delivery.type, delivery.endpoint, delivery.attempts.map((attempt: { status: number | null }) => attempt.status)],
        ['delivered', 'credits.granted', { id: endpoint.id, url: receiver.url }, [500, null, 200]],
      );
      assert.deepEqual(
        delivery.attempts.map((attempt: { error?: string }) => attempt.error?.replace(/\d+ ms/, 'N ms')),
        ['the endpoint answered HTTP 500', 'timeout: no answer within N ms', undefined],
        'each failed attempt says why',
      );

      assert.deepEqual(json(await call('POST', `/admin/webhooks/deliveries/${delivery.id}/retry`)), { id: delivery.id, state: 'pending' });
      await sender().runOnce();
      assert.equal(receiver.received.length, 4, 'sent again on request');
      assert.equal(receiver.received[3]!.headers['webhook-id'], event.id);
      assert.deepEqual(json(await call('DELETE', `/admin/webhooks/${endpoint.id}`)), { deleted: endpoint.id });
    } finally {
      await receiver.stop();
    }
  });

  it('sends credits.low once as a burst of debits crosses the mark, credits.depleted at zero, and again after a top-up', async () => {
    const receiver = await startReceiver([200]);
    try {
      await call('POST', '/admin/webhooks', { url: receiver.url, events: ['credits.low', 'credits.depleted'] });
      const key = json(await call('POST', '/admin/keys', { credits: 20 }));
      assert.equal(json(await call('PATCH', `/admin/keys/${key.id}`, { low_balance_threshold: 5 })).low_balance_threshold, 5);
      const spend = () => context.app.inject({ url: '/document', headers: { 'x-api-key': key.key, 'svc-doc-id': 'gdpr-17' } });
      const statuses = await Promise.all(Array.from({ length: 25 }, spend));
      assert.equal(statuses.filter((response) => response.statusCode === 200).length, 20);
      await call('POST', `/admin/keys/${key.id}/topup`, { credits: 8 });
      for (let request = 0; request < 4; request++) await spend();
      await sender().runOnce();
      const events = receiver.received.map((received) => JSON.parse(received.body)).filter((event) => event.data.key_id === key.id);
      // Deliveries run concurrently, so arrival order is not event order. The burst's debits may
      // share one batch, whose balance after is 0: both marks crossed by one change.
      const seen = events.map((event) => `${event.type} ${event.data.threshold}`).sort();
      assert.deepEqual(seen, ['credits.depleted 0', 'credits.low 5', 'credits.low 5']);
      assert.ok(events.every((event) => event.data.balance <= event.data.threshold));
    } finally {
      await receiver.stop();
    }
  });

  it('sends key.revoked and key.rolled to the endpoints that want them', async () => {
    const receiver = await startReceiver([200]);
    try {
      await call('POST', '/admin/webhooks', { url: receiver.url, events: ['key.revoked', 'key.rolled'] });
      const key = json(await call('POST', '/admin/keys', { credits: 3 }));
      await call('POST', `/admin/keys/${key.id}/roll`, { grace_seconds: 60 });
      await call('POST', `/admin/keys/${key.id}/revoke`);
      await call('POST', `/admin/keys/${key.id}/revoke`);
      await sender().runOnce();
      const events = receiver.received.map((received) => JSON.parse(received.body)).filter((event) => event.data.key_id === key.id);
      // Deliveries run concurrently: arrival order is not event order. One revoke event for two revokes.
      assert.deepEqual(events.map((event) => event.type).sort(), ['key.revoked', 'key.rolled']);
    } finally {
      await receiver.stop();
    }
  });

  it('lists endpoints without secrets; refuses bad input (400), unknown ids (404) and a read-only token (403)', async () => {
    const listed = json(await call('GET', '/admin/webhooks'));
    assert.ok(listed.webhooks.length > 0);
    assert.ok(listed.webhooks.every((endpoint: Record<string, unknown>) => endpoint.secret === undefined));
    assertEnvelope(await call('POST', '/admin/webhooks', { url: 'ftp://example.com' }), 400, /url/);
    assertEnvelope(await call('POST', '/admin/webhooks', { url: 'http://127.0.0.1:9/x', events: ['credits.sideways'] }), 400, /events/);
    assertEnvelope(await call('DELETE', '/admin/webhooks/whep_nope'), 404);
    assertEnvelope(await call('POST', '/admin/webhooks/deliveries/whd_nope/retry'), 404);
    assertEnvelope(await call('GET', '/admin/webhooks/deliveries?cursor=nonsense'), 400, /cursor/);
    const reader = (await new AdminTokens(context.store.admin).create('viewer', true)).token;
    const refused = await context.app.inject({
      method: 'POST',
      url: '/admin/webhooks',
      headers: { authorization: `Bearer ${reader}` },
      payload: { url: 'http://127.0.0.1:9/x' },
    });
    assertEnvelope(refused, 403, /read-only/);
  });
});
