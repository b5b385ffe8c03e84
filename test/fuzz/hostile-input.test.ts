import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { FaceDownstream } from '../support/face-downstream.js';
import { createTestApp, pngLikeImage, type TestContext } from '../support/helper.js';

/** Cases per property: a short run in `npm test`, a long one with `npm run fuzz`. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

const PATHS = [
  '/',
  '/version',
  '/profile',
  '/nettest',
  '/credits',
  '/document',
  '/query',
  '/face/search',
  '/docs/',
  '/nope',
  '/query/',
  '//query',
  '/%00',
  '/query?x=1',
];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'] as const;
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  '',
  'APPLICATION/JSON',
];

const hostileKeys = fc.constantFrom('__proto__', 'constructor', 'prototype', 'query', 'top_k', 'filters', 'image_b64', 'match', 'toString', '');
const hostileObject = fc.dictionary(fc.oneof(hostileKeys, fc.string()), fc.jsonValue(), { maxKeys: 6 });
const deep = fc.integer({ min: 1, max: 2000 }).map((depth) => `${'{"query":'.repeat(depth)}"x"${'}'.repeat(depth)}`);
const texts = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('"', '*', 'AND', 'OR NOT', 'NEAR(a b)', '^', ':', '\u0000', '\uD800', '🔥'.repeat(500), 'a'.repeat(20_000)),
  // The query text's own syntax, in any order: quotes, minus signs, stars, stopwords, words and typos.
  fc
    .array(fc.constantFrom('"', '-', '-"', ' ', '*', 'breach', 'data', 'the', 'of', 'privacy', 'IL-6', 'é', 'brea*', 'privcay', 'dat*', '日本語'), {
      maxLength: 30,
    })
    .map((parts) => parts.join('')),
);

const clauseNames = fc.constantFrom(
  'match',
  'match_phrase',
  'multi_match',
  'bool',
  'term',
  'terms',
  'range',
  'exists',
  'ids',
  'match_all',
  'prefix',
  'fuzzy',
  'must',
  'nope',
);
/** Query objects shaped like Elasticsearch's, nested, with any values where the clauses take some. */
const queryObjects = fc.letrec((tie) => ({
  clause: fc.oneof(
    { depthSize: 'small' },
    fc.dictionary(clauseNames, fc.oneof(texts, fc.jsonValue(), tie('fields'), tie('bool')), { minKeys: 1, maxKeys: 2 }),
    tie('bool'),
  ),
  fields: fc.dictionary(
    fc.constantFrom('title', 'text', 'year', 'jurisdiction', 'query', 'operator', 'gte', 'values', 'field', 'value', 'fuzziness'),
    fc.oneof(texts, fc.jsonValue()),
    { maxKeys: 3 },
  ),
  bool: fc
    .record(
      {
        must: fc.array(tie('clause'), { maxLength: 3 }),
        should: tie('clause'),
        must_not: fc.array(tie('clause'), { maxLength: 2 }),
        minimum_should_match: fc.jsonValue(),
      },
      { requiredKeys: [] },
    )
    .map((bool) => ({ bool })),
})).clause;

const bodies = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  hostileObject.map((value) => JSON.stringify(value)),
  fc
    .record(
      {
        query: fc.oneof(texts, fc.jsonValue()),
        top_k: fc.jsonValue(),
        filters: fc.oneof(hostileObject, fc.jsonValue()),
        typos: fc.oneof(fc.constantFrom('auto', 0, 1, 2), fc.jsonValue()),
        prefix: fc.oneof(fc.boolean(), fc.jsonValue()),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        query: queryObjects,
        sort: fc.oneof(fc.array(fc.constantFrom('year:desc', 'title', '_score', 'doc_id:asc', 'x:y', ''), { maxLength: 4 }), fc.jsonValue()),
      },
      { requiredKeys: ['query'] },
    )
    .map((v) => JSON.stringify(v)),
  fc
    .record(
      { image_b64: fc.oneof(fc.base64String({ maxLength: 200 }), texts), top_k: fc.jsonValue(), threshold: fc.jsonValue(), nested: hostileObject },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '{"__proto__":{"polluted":true},"query":"x"}',
    '{"constructor":{"prototype":{"polluted":true}},"query":"x"}',
    '{"query":"x","query":"y"}',
    '{',
    '[]',
    'null',
    '',
    '\uFEFF{"query":"x"}',
  ),
  deep,
  texts,
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
);

describe('hostile input on every endpoint', () => {
  let context: TestContext;
  let downstream: FaceDownstream;
  let key: string;
  /** A key with no credits, for the 402 paths. */
  let broke: string;

  before(async () => {
    downstream = await new FaceDownstream().start();
    downstream.behaviour = { kind: 'matches', matches: [{ doc_id: 'p1', confidence: 0.9, face_file: 'https://faces.example/p1.jpg' }] };
    context = await createTestApp({ face: downstream.client({ timeoutMs: 1000 }), settings: { bodyLimitBytes: 64 * 1024 } });
    key = await context.createKey(1_000_000_000);
    broke = await context.createKey(0);
  });
  after(async () => {
    await context.close();
    await downstream.stop();
  });

  it(`never answers 5xx, always with an envelope, and charges exactly the requests that say so (${RUNS} cases)`, async () => {
    let tried = 0;
    const statuses = new Map<number, number>();
    let balance = await context.balanceOf(key);
    const routes = fc.constantFrom<[string, string]>(
      ['GET', '/credits'],
      ['GET', '/document'],
      ['POST', '/query'],
      ['POST', '/face/search'],
      ['GET', '/'],
      ['GET', '/version'],
      ['GET', '/profile'],
      ['GET', '/nettest'],
    );
    const anyRoute = fc.tuple(fc.constantFrom(...METHODS), fc.constantFrom(...PATHS));
    const valid = fc.constantFrom(
      '{"query":"breach privacy"}',
      '{"query":{"match":{"text":"controller"}},"top_k":3}',
      `{"image_b64":"${pngLikeImage().toString('base64')}","top_k":2}`,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ arbitrary: routes, weight: 8 }, { arbitrary: anyRoute, weight: 2 }),
        fc.record(
          {
            'x-api-key': fc.oneof(
              { arbitrary: fc.constantFrom(key, key.toUpperCase(), broke), weight: 6 },
              { arbitrary: fc.constantFrom(` ${key}`, `${key}, ${key}`), weight: 1 },
              { arbitrary: fc.string({ maxLength: 80 }), weight: 1 },
              { arbitrary: fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 64, maxLength: 64 }), weight: 1 },
            ),
            'svc-doc-id': fc.oneof(
              texts.filter((text) => !/[\r\n\0]/.test(text) && text.length < 8000),
              fc.constantFrom('gdpr-17', 'ccpa'),
            ),
            'content-type': fc.oneof(
              { arbitrary: fc.constant('application/json'), weight: 6 },
              { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 2 },
            ),
            'idempotency-key': fc.oneof(
              { arbitrary: fc.constantFrom('retry-1', 'retry-2', '__proto__'), weight: 3 },
              { arbitrary: fc.string({ maxLength: 300 }), weight: 1 },
              { arbitrary: fc.constantFrom('', ' ', 'x'.repeat(256), 'a, b'), weight: 1 },
            ),
          },
          { requiredKeys: [] },
        ),
        fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: bodies, weight: 7 }),
        async ([method, url], headers, body) => {
          tried++;
          const safeHeaders = Object.fromEntries(
            Object.entries(headers).filter(([, value]) => typeof value === 'string' && /^[\t\x20-\x7e\x80-\xff]*$/.test(value)),
          );
          const response = await context.app.inject({
            method,
            url,
            headers: safeHeaders,
            ...(method === 'GET' || method === 'HEAD' ? {} : { payload: body }),
          });
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          assert.ok(response.statusCode < 500, `${method} ${url} -> ${response.statusCode}: ${response.body.slice(0, 300)}`);
          if (method !== 'HEAD' && response.statusCode !== 200 && !url.startsWith('/docs')) {
            const envelope = response.json() as { status: unknown; message: unknown };
            assert.equal(envelope.status, response.statusCode);
            assert.equal(typeof envelope.message, 'string');
          }
          // A replayed answer repeats the credits left at the time it was first given, and costs nothing.
          const charged = response.headers['x-credits-remaining'] !== undefined && response.headers['idempotent-replayed'] !== 'true';
          const now = await context.balanceOf(key);
          assert.equal(now, balance - (charged ? 1 : 0), `${method} ${url} ${response.statusCode}: balance moved without saying so`);
          if (charged) assert.equal(Number(response.headers['x-credits-remaining']), now);
          balance = now;
        },
      ),
      { numRuns: RUNS },
    );
    const histogram = [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
    console.log(`fuzz: ${tried} hostile requests tried; answers by status: ${histogram}`);
  });
});
