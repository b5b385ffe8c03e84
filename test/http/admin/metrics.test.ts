import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
// @ts-expect-error: the parser ships no type declarations
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, type TestContext } from '../../support/helper.js';

interface Family {
  name: string;
  type: string;
  metrics: Array<{ value?: string; count?: string; labels?: Record<string, string>; buckets?: Record<string, string> }>;
}

const parse = parsePrometheusTextFormat as (text: string) => Family[];

describe('GET /metrics', () => {
  let context: TestContext;
  let reader: string;
  before(async () => {
    context = await createTestApp();
    reader = (await new AdminTokens(context.store.admin).create('prometheus', true)).token;
  });
  after(async () => context.close());

  const scrape = async () => {
    const response = await context.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${reader}` } });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain/);
    return { text: response.body, families: new Map(parse(response.body).map((family) => [family.name, family])) };
  };
  const sampleOf = (families: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
    Number(
      families.get(name)?.metrics.find((metric) => Object.entries(labels).every(([label, value]) => metric.labels?.[label] === value))?.value ?? 0,
    );

  it('needs an admin token; a read-only one is enough', async () => {
    assertEnvelope(await context.app.inject({ url: '/metrics' }), 401);
    await scrape();
  });

  it('counts requests by route and status, debits by outcome and 429-free replays, with no key, token or document id in any label', async () => {
    const key = await context.createKey(1);
    const before = (await scrape()).families;
    const document = (docId: string, idempotencyKey?: string) =>
      context.app.inject({
        url: '/document',
        headers: { 'x-api-key': key, 'svc-doc-id': docId, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
      });
    assert.equal((await document('gdpr-17', 'once')).statusCode, 200);
    assert.equal((await document('gdpr-17', 'once')).headers['idempotent-replayed'], 'true');
    assert.equal((await document('gdpr-33')).statusCode, 402);
    const { text, families } = await scrape();
    const increase = (name: string, labels: Record<string, string>) => sampleOf(families, name, labels) - sampleOf(before, name, labels);
    assert.equal(increase('metered_search_http_requests_total', { route: '/document', method: 'GET', status: '200' }), 2);
    assert.equal(increase('metered_search_http_requests_total', { route: '/document', method: 'GET', status: '402' }), 1);
    assert.equal(increase('metered_search_debits_total', { outcome: 'charged' }), 1);
    assert.equal(increase('metered_search_debits_total', { outcome: 'no-credits' }), 1);
    assert.equal(increase('metered_search_idempotent_replays_total', {}), 1);
    assert.equal(increase('metered_search_credits_spent_total', {}), 1, 'the one charged request, at its price');
    assert.equal(families.get('metered_search_http_request_duration_seconds')?.type, 'HISTOGRAM');
    assert.ok(sampleOf(families, 'metered_search_documents') > 0);
    assert.ok(families.has('metered_search_process_resident_memory_bytes'));
    for (const secret of [key, reader, 'gdpr-17', 'gdpr-33']) assert.ok(!text.includes(secret), `${secret} is not in the metrics`);
  });

  it('times searches: one observation per /query that searched', async () => {
    const key = await context.createKey(5);
    const searches = async () => Number((await scrape()).families.get('metered_search_search_duration_seconds')?.metrics[0]?.count ?? 0);
    const before = await searches();
    for (const query of ['breach', 'overtime']) {
      await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query } });
    }
    await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query: 5 } });
    assert.equal((await searches()) - before, 2, 'the refused request searched nothing');
  });

  it('counts credits granted through the admin API', async () => {
    const writer = (await new AdminTokens(context.store.admin).create('billing', false)).token;
    const before = sampleOf((await scrape()).families, 'metered_search_credits_granted_total');
    await context.app.inject({ method: 'POST', url: '/admin/keys', headers: { authorization: `Bearer ${writer}` }, payload: { credits: 25 } });
    assert.equal(sampleOf((await scrape()).families, 'metered_search_credits_granted_total') - before, 25);
  });
});

describe('GET /metrics, open or off', () => {
  it('answers without a token when METRICS_PUBLIC, and is not served when metrics are off', async () => {
    const open = await createTestApp({ settings: { metricsPublic: true } });
    const off = await createTestApp({ metrics: false });
    try {
      assert.equal((await open.app.inject({ url: '/metrics' })).statusCode, 200);
      assert.equal((await off.app.inject({ url: '/metrics' })).statusCode, 404);
    } finally {
      await open.close();
      await off.close();
    }
  });
});
