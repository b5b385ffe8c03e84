import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { AdminTokens } from '../../src/admin/admin-tokens.js';
import { hashApiKey } from '../../src/billing/keys.js';
import { FaceDownstream } from '../support/face-downstream.js';
import { createTestApp, pngLikeImage, type TestContext, tempDir } from '../support/helper.js';

/** Headers whose presence the document must announce wherever they are sent. */
const ANNOUNCED = ['x-request-id', 'x-credits-remaining', 'idempotent-replayed', 'ratelimit', 'ratelimit-policy', 'retry-after', 'allow'];

type Operation = { operationId?: string; responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }> };

describe('the OpenAPI document', () => {
  const dir = tempDir();
  const downstream = new FaceDownstream();
  let context: TestContext;
  let document: { paths: Record<string, Record<string, Operation>> };
  let file = '';

  before(async () => {
    await downstream.start();
    context = await createTestApp({
      face: downstream.client({ timeoutMs: 300, breakerFailures: 100 }),
      rateLimitPerSecond: 2,
      settings: { bodyLimitBytes: 4096 },
    });
    document = (await context.app.inject({ url: '/openapi.json' })).json();
    file = join(dir.path, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
  });
  after(async () => {
    await context.close();
    await downstream.stop();
    dir.remove();
  });

  it('passes Redocly (recommended rules) and Spectral (spectral:oas) without an error or a warning', () => {
    const redocly = spawnSync(join('node_modules', '.bin', 'redocly'), ['lint', file, '--format=summary'], { encoding: 'utf8' });
    assert.equal(redocly.status, 0, redocly.stdout + redocly.stderr);
    assert.match(redocly.stdout + redocly.stderr, /Your API description is valid/);
    assert.doesNotMatch(redocly.stdout + redocly.stderr, /You have \d+ warnings?/);
    const spectral = spawnSync(join('node_modules', '.bin', 'spectral'), ['lint', file, '--ruleset', '.spectral.yaml', '--fail-severity=warn'], {
      encoding: 'utf8',
    });
    assert.equal(spectral.status, 0, spectral.stdout + spectral.stderr);
  });

  it('documents every status and header that the routes answer', async () => {
    const key = await context.createKey(4);
    const empty = await context.createKey(0);
    const json = { 'content-type': 'application/json' };
    const answers: Array<[string, string, LightMyRequestResponse]> = [];
    const call = async (method: string, url: string, headers: Record<string, string>, payload?: string, operation = method, path = url) => {
      answers.push([operation.toLowerCase(), path, await context.app.inject({ method: method as 'GET', url, headers, payload })]);
    };
    for (const url of ['/', '/version', '/profile', '/nettest']) await call('GET', url, {});
    await call('GET', '/credits', { 'x-api-key': key });
    await call('GET', '/credits', { 'x-api-key': empty });
    await call('GET', '/credits', { 'x-api-key': 'ab'.repeat(32) });
    await call('GET', '/document', { 'x-api-key': key, 'svc-doc-id': 'gdpr-17', 'idempotency-key': 'doc-1' });
    await call('GET', '/document', { 'x-api-key': key, 'svc-doc-id': 'gdpr-17', 'idempotency-key': 'doc-1' });
    await call('GET', '/document', { 'x-api-key': key, 'svc-doc-id': 'nope' });
    await call('HEAD', '/document', { 'x-api-key': key, 'svc-doc-id': 'gdpr-17' }, undefined, 'GET');
    await call('OPTIONS', '/query', { 'x-api-key': key }, undefined, 'POST');
    await call('POST', '/query', { 'x-api-key': key, ...json }, '{"query":"breach"}');
    await call('POST', '/query', { 'x-api-key': key, ...json }, '{"query":"breach"}');
    await call('POST', '/query', { 'x-api-key': empty, ...json }, '{"query":"breach"}');
    await call('POST', '/query', { 'x-api-key': key, ...json }, `{"query":"${'x'.repeat(5000)}"}`);
    await call('POST', '/query', { 'x-api-key': key, ...json }, '{"query":');
    const image = pngLikeImage().toString('base64');
    await call('POST', '/face/search', { 'x-api-key': empty, ...json }, JSON.stringify({ image_b64: image }));
    downstream.behaviour = { kind: 'status', status: 404, body: '{"message":"no gallery"}' };
    await call('POST', '/face/search', { 'x-api-key': await context.createKey(5), ...json }, JSON.stringify({ image_b64: image }));

    for (const url of ['/', '/version', '/credits']) await call('HEAD', url, { 'x-api-key': key }, undefined, 'HEAD');
    const capped = await context.createKey(10);
    const cappedId = (await context.store.ledger.findKeyByHash(hashApiKey(capped)))!.id;
    await context.store.ledger.updateKeySettings(cappedId, { spendCaps: [{ credits: 1, interval: 'day' }] });
    await call('POST', '/query', { 'x-api-key': capped, ...json }, '{"query":"breach"}');
    await call('POST', '/query', { 'x-api-key': capped, ...json }, '{"query":"breach"}');
    downstream.behaviour = { kind: 'status', status: 400, body: '{"message":"not a face image"}' };
    await call('POST', '/face/search', { 'x-api-key': await context.createKey(5), ...json }, JSON.stringify({ image_b64: image }));
    const admin = { authorization: `Bearer ${(await new AdminTokens(context.store.admin).create('operator', false)).token}` };
    await call('GET', '/metrics', admin);
    for (const [url, path] of [
      ['/admin/usage', '/admin/usage'],
      [`/admin/keys/${cappedId}/usage`, '/admin/keys/{id}/usage'],
    ]) {
      await call('GET', url, { ...admin, accept: 'text/csv' }, undefined, 'GET', path);
      await call('GET', url, admin, undefined, 'GET', path);
    }
    const portalKey = await context.createKey(2);
    const portalKeyId = (await context.store.ledger.findKeyByHash(hashApiKey(portalKey)))!.id;
    await call('GET', '/portal/api/account', { 'x-api-key': portalKey });
    await call('GET', '/portal/api/account', { 'x-api-key': 'cd'.repeat(32) });
    await call('GET', '/portal/api/account', {});
    await call('PATCH', `/portal/api/keys/${portalKeyId}`, { 'x-api-key': portalKey, ...json }, '{"name":"mine"}', 'PATCH', '/portal/api/keys/{id}');
    await call('PATCH', `/portal/api/keys/${cappedId}`, { 'x-api-key': portalKey, ...json }, '{"name":"x"}', 'PATCH', '/portal/api/keys/{id}');
    await call(
      'POST',
      `/portal/api/keys/${portalKeyId}/roll`,
      { 'x-api-key': portalKey, ...json },
      '{"grace_seconds":0}',
      'POST',
      '/portal/api/keys/{id}/roll',
    );
    await call('GET', '/portal/sign-in?token=unknown', {}, undefined, 'GET', '/portal/sign-in');
    const roll = { ...admin, ...json, 'idempotency-key': 'roll-1' };
    for (let attempt = 0; attempt < 2; attempt++) {
      await call('POST', `/admin/keys/${cappedId}/roll`, roll, '{"grace_seconds":0}', 'POST', '/admin/keys/{id}/roll');
    }

    const statuses = new Set(answers.map(([, , response]) => response.statusCode));
    for (const status of [200, 400, 401, 402, 404, 405, 413, 429]) assert.ok(statuses.has(status), `the run answered ${status}`);
    for (const [method, url, response] of answers) {
      const operation = document.paths[url]?.[method];
      assert.ok(operation, `${method} ${url} is documented`);
      const status = String(response.statusCode);
      const documented = operation.responses[status] ?? operation.responses[`${status[0]}XX`];
      assert.ok(documented, `${method} ${url} documents ${status}`);
      for (const header of ANNOUNCED) {
        if (response.headers[header] !== undefined) {
          assert.ok(documented.headers?.[header], `${method} ${url} ${status} documents its ${header} header`);
        }
      }
      const mediaType = String(response.headers['content-type'] ?? '').split(';')[0] as string;
      if (response.body !== '' && documented.content) {
        assert.ok(documented.content[mediaType], `${method} ${url} ${status} documents its ${mediaType} answer`);
      }
    }
    assert.ok(
      answers.some(([, url, response]) => url === '/admin/keys/{id}/roll' && response.headers['idempotent-replayed'] === 'true'),
      'a roll was replayed',
    );
  });

  it('answers 405 with Allow on a path with parameters, as on any other path, and declares the ingest body', async () => {
    const admin = { authorization: `Bearer ${(await new AdminTokens(context.store.admin).create('methods', false)).token}` };
    const wrong = await context.app.inject({ method: 'PUT', url: '/admin/keys/key_anything', headers: admin });
    assert.equal(wrong.statusCode, 405);
    assert.equal(wrong.headers.allow, 'GET, HEAD, PATCH');
    const roll = await context.app.inject({ method: 'GET', url: '/admin/keys/key_anything/roll', headers: admin });
    assert.deepEqual([roll.statusCode, roll.headers.allow], [405, 'POST']);
    assert.equal((await context.app.inject({ method: 'GET', url: '/admin/keys/a/b/c', headers: admin })).statusCode, 404);
    const ingest = document.paths['/admin/documents']?.post as unknown as { requestBody?: { content: Record<string, unknown> } };
    assert.deepEqual(Object.keys(ingest.requestBody?.content ?? {}).sort(), ['application/json', 'application/x-ndjson']);
  });

  it('marks the free operations as needing no key and names every operation', () => {
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        assert.match(operation.operationId ?? '', /^[a-z][A-Za-z]+$/, `${method} ${path}`);
      }
    }
    for (const path of ['/', '/version', '/profile', '/nettest']) assert.deepEqual((document.paths[path].get as { security?: unknown }).security, []);
  });
});
