import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { FaceDownstream } from '../support/face-downstream.js';
import { createTestApp, pngLikeImage, type TestContext, tempDir } from '../support/helper.js';

/** Headers whose presence the document must announce wherever they are sent. */
const ANNOUNCED = ['x-request-id', 'x-credits-remaining', 'idempotent-replayed', 'ratelimit', 'ratelimit-policy', 'retry-after', 'allow'];

type Operation = { operationId?: string; responses: Record<string, { headers?: Record<string, unknown> }> };

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
    const call = async (method: string, url: string, headers: Record<string, string>, payload?: string, operation = method) => {
      answers.push([operation.toLowerCase(), url, await context.app.inject({ method: method as 'GET', url, headers, payload })]);
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
    }
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
