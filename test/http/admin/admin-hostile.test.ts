import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

/** Hostile and careless input to the admin API: a 400 naming what to fix, never a 500, never a change. Runs on both stores. */
describe('admin API: hostile input', () => {
  let context: TestContext;
  let token: string;
  let keyId: string;
  before(async () => {
    context = await createTestApp();
    token = (await new AdminTokens(context.store.admin).create('operator', false)).token;
    keyId = json(await call('POST', '/admin/keys', { credits: 5, name: 'target' })).id;
  });
  after(async () => context.close());

  function call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) {
    return context.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, ...headers },
      ...(payload === undefined ? {} : typeof payload === 'string' ? { payload } : { payload: payload as object }),
    });
  }
  const balance = async () => json(await call('GET', `/admin/keys/${keyId}`)).balance;

  it('refuses NUL and other control characters in paths, query strings and bodies with a 400 naming the field', async () => {
    assertEnvelope(await call('GET', '/admin/keys/%00'), 400, /path segment id must not hold control characters/);
    assertEnvelope(await call('GET', '/admin/keys?name_contains=a%00'), 400, /query parameter name_contains must not hold control characters/);
    assertEnvelope(await call('DELETE', '/admin/documents/a%00b'), 400, /doc_id must not hold control characters/);
    for (const name of ['a\u0000b', 'red\u001b[31m', 'two\nlines']) {
      assertEnvelope(await call('POST', '/admin/keys', { credits: 1, name }), 400, /field name must not hold control characters/);
    }
    assertEnvelope(await call('POST', `/admin/keys/${keyId}/topup`, { credits: 7, reference: 'inv\u0000' }), 400, /reference/);
    assertEnvelope(await call('POST', '/admin/webhooks', { url: 'https://example.com/\u0000' }), 400, /url/);
    assert.equal(await balance(), 5, 'nothing granted');
  });

  it('refuses bidirectional overrides and line separators in names, and unpaired surrogates or NUL anywhere in names and metadata', async () => {
    for (const name of ['evil\u202eexe.txt', 'a\u2066b', 'mark\u200f', 'line\u2028sep', 'para\u2029']) {
      assertEnvelope(await call('POST', '/admin/accounts', { name }), 400, /field name must not hold control characters/);
    }
    // JSON's \ud800 escape, as a caller would send it: a string no UTF-8 store can hold.
    const raw = (body: string) => call('POST', '/admin/accounts', body, { 'content-type': 'application/json' });
    assertEnvelope(await raw('{"name": "lone \\ud800"}'), 400, /field name must not hold control characters .* unpaired surrogate/);
    assertEnvelope(await raw('{"name": "ok", "metadata": {"note": "lone \\udc00"}}'), 400, /field metadata holds a character that cannot be stored/);
    assertEnvelope(await raw('{"name": "ok", "metadata": {"note": "nul \\u0000"}}'), 400, /field metadata holds a character that cannot be stored/);
    assertEnvelope(await call('PATCH', `/admin/keys/${keyId}`, { metadata: { deep: [{ x: '\ud800' }] } }), 400, /metadata/);
    assert.equal(json(await call('GET', '/admin/accounts')).accounts.length, 1, 'no account was made');
    assert.equal((await call('POST', '/admin/accounts', { name: 'عربي 😀 Café', metadata: { note: 'שלום' } })).statusCode, 201);
  });

  it('refuses documents whose id, title, text or metadata hold control characters, and keeps tabs and line breaks in text', async () => {
    const before = json(await call('GET', '/admin/documents')).count;
    const refused = [
      [{ doc_id: 'a\u0000', text: 'x' }, /index 1: doc_id must not hold control characters/],
      [{ doc_id: 'ok', title: 'nul\u0000', text: 'x' }, /title must not hold control characters/],
      [{ doc_id: 'ok', text: 'esc\u001b[2J' }, /text must not hold control characters/],
      [{ doc_id: 'ok', text: 'x', shelf: 'a\u0000' }, /shelf must not hold control characters/],
      [{ doc_id: 'ok', text: 'x', tags: ['fine', 'b\u0000'] }, /tags\[1\] must not hold control characters/],
    ] as const;
    for (const [document, why] of refused) {
      assertEnvelope(await call('POST', '/admin/documents', [{ doc_id: 'first', text: 'fine' }, document]), 400, why);
    }
    assert.equal(json(await call('GET', '/admin/documents')).count, before, 'nothing written');
    const spaced = await call('POST', '/admin/documents', [{ doc_id: 'spaced', title: 'Tab\there', text: 'line one\nline two\r\n\tend' }]);
    assert.equal(spaced.statusCode, 200, spaced.body);
    assert.equal(json(await call('GET', '/admin/documents/spaced')).text, 'line one\nline two\r\n\tend');
  });

  it('bounds JSON lines by the depth of JSON bodies, refusing the whole upload', async () => {
    const before = json(await call('GET', '/admin/documents')).count;
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    for (const levels of [100, 9000]) {
      const lines = `{"doc_id":"flat-${levels}","text":"fine"}\n{"doc_id":"deep-${levels}","text":"x","meta":${nested(levels)}}\n`;
      assertEnvelope(
        await call('POST', '/admin/documents', lines, { 'content-type': 'application/x-ndjson' }),
        400,
        /line 2: a document may nest objects and arrays at most 64 levels deep/,
      );
    }
    assert.equal(json(await call('GET', '/admin/documents')).count, before);
  });

  it('refuses a forged page cursor, whatever it holds, with a 400', async () => {
    const forged = (place: unknown) => Buffer.from(JSON.stringify(place)).toString('base64url');
    for (const place of [
      ['9999-99-99T00:00:00.000Z', 'key_0'],
      ['2026-01-01T00:00:00.000Z', 'key\u0000'],
      ['0000-01-01', 'x'],
    ]) {
      assertEnvelope(await call('GET', `/admin/keys?cursor=${forged(place)}`), 400, /cursor is not one this API gave/);
    }
  });

  it('accepts usage spans from 1970 to 9999 only', async () => {
    assertEnvelope(await call('GET', '/admin/usage?from=0000-01-01T00:00:00Z&to=0000-01-02T00:00:00Z'), 400, /from 1970-01-01T00:00:00Z to 9999/);
    assertEnvelope(await call('GET', `/admin/keys/${keyId}/usage?from=1969-12-31T00:00:00Z&to=1970-01-02T00:00:00Z`), 400, /1970/);
    assert.equal((await call('GET', '/admin/usage?from=9999-12-01T00:00:00Z&to=9999-12-31T00:00:00Z')).statusCode, 200);
    assert.equal((await call('GET', '/admin/usage?from=1970-01-01T00:00:00Z&to=1970-01-31T00:00:00Z')).statusCode, 200);
  });

  it('names an unknown body field, and takes null in an optional field as the field left out', async () => {
    assertEnvelope(await call('POST', `/admin/keys/${keyId}/topup`, { credits: 1, note: 'x' }), 400, /Unknown field "note"/);
    const topUp = await call('POST', `/admin/keys/${keyId}/topup`, { credits: 1, expires_at: null, reference: null });
    assert.equal(topUp.statusCode, 200, topUp.body);
    assert.equal(json(topUp).balance, 6);
    assert.equal(json(await call('PUT', `/admin/keys/${keyId}/rate`, { rate: null })).rate, null, 'null keeps its meaning where it has one');
  });

  it('takes the Bearer scheme in any case, and tells a caller without a token the command that makes one', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const response = await context.app.inject({ url: `/admin/keys/${keyId}`, headers: { authorization: `${scheme} ${token}` } });
      assert.equal(response.statusCode, 200, scheme);
    }
    assertEnvelope(await context.app.inject({ url: '/admin/keys' }), 401, /npx metered-search admin tokens create --name/);
  });

  it('refuses every change to a revoked key alike (409), prices and rate included', async () => {
    const revoked = json(await call('POST', '/admin/keys', { credits: 1 })).id;
    await call('POST', `/admin/keys/${revoked}/revoke`);
    assertEnvelope(await call('PATCH', `/admin/keys/${revoked}`, { prices: { '/query': 2 } }), 409, /revoked/);
    assertEnvelope(await call('PUT', `/admin/keys/${revoked}/rate`, { rate: 5 }), 409, /revoked/);
    const shown = json(await call('GET', `/admin/keys/${revoked}`));
    assert.deepEqual([shown.prices, shown.rate], [null, null]);
  });

  it('applies a price change on the instance that made it at once', async () => {
    const created = json(await call('POST', '/admin/keys', { credits: 10 }));
    const query = () => context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': created.key }, payload: { query: 'data' } });
    assert.equal((await query()).headers['x-credits-charged'], '1');
    await call('PATCH', `/admin/keys/${created.id}`, { prices: { '/query': 3 } });
    assert.equal((await query()).headers['x-credits-charged'], '3');
  });

  it('parses webhook URLs, refusing credentials and link-local or cloud-metadata addresses', async () => {
    const refused = [
      ['http://[bad', /not a valid URL/],
      ['ftp://example.com/hook', /http:\/\/ or https:\/\//],
      ['http://user:pw@example.com/hook', /user name or password/],
      ['http://169.254.169.254/latest/meta-data', /link-local or cloud-metadata/],
      ['http://[fe80::1]/hook', /link-local or cloud-metadata/],
      ['http://metadata.google.internal/computeMetadata/v1', /link-local or cloud-metadata/],
    ] as const;
    for (const [url, why] of refused) assertEnvelope(await call('POST', '/admin/webhooks', { url }), 400, why);
    assert.deepEqual(json(await call('GET', '/admin/webhooks')).webhooks, []);
    assert.equal((await call('POST', '/admin/webhooks', { url: 'http://127.0.0.1:9/hook' })).statusCode, 201, 'loopback stays allowed');
  });
});
