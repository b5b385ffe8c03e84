import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { STOPWORDS } from '../../../src/search/engine/languages.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

describe('POST /query', () => {
  let context: TestContext;
  let key: string;
  before(async () => {
    context = await createTestApp();
    key = await context.createKey(10_000);
  });
  after(async () => context.close());

  const query = (payload: unknown, headers: Record<string, string> = {}) =>
    context.app.inject({
      method: 'POST',
      url: '/query',
      headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
  const hits = async (payload: unknown) => json(await query(payload)).resp.body.hits as { total: number; documents: any[] };
  const ids = async (payload: unknown) => (await hits(payload)).documents.map((document) => document.doc_id).sort();

  describe('happy', () => {
    it('answers the QueryResponse shape, best first, confidence in [0, 1] non-increasing', async () => {
      const response = await query({ query: 'personal data breach' });
      assert.equal(response.statusCode, 200);
      const body = json(response);
      assert.equal(body.status, 200);
      assert.equal(body.resp.statusCode, 200);
      const { total, documents } = body.resp.body.hits;
      assert.ok(total >= 3);
      assert.deepEqual(Object.keys(documents[0]).sort(), ['confidence', 'doc_id', 'title']);
      for (const [index, document] of documents.entries()) {
        assert.ok(document.confidence >= 0 && document.confidence <= 1);
        if (index > 0) assert.ok(documents[index - 1].confidence >= document.confidence);
      }
      assert.equal(documents[0].doc_id, 'gdpr-33');
    });

    it('charges one credit and reports the balance after it', async () => {
      const own = await context.createKey(5);
      const response = await query({ query: 'breach' }, { 'x-api-key': own });
      assert.equal(response.headers['x-credits-remaining'], '4');
      assert.equal(await context.balanceOf(own), 4);
    });

    it('matches any analysed term (OR) and stems', async () => {
      assert.deepEqual(await ids({ query: 'erasure overtime' }), ['flsa', 'gdpr-17']);
      assert.deepEqual(await ids({ query: 'breaches' }), ['gdpr-33', 'guidance']);
      assert.deepEqual(await ids({ query: 'notified' }), ['gdpr-33']);
    });

    it('limits documents to top_k (default 10) while total counts every match', async () => {
      const limited = await hits({ query: 'personal data breach privacy', top_k: 1 });
      assert.equal(limited.documents.length, 1);
      assert.ok(limited.total > 1);
      const all = await hits({ query: 'a the personal data breach overtime consumers', top_k: 100 });
      assert.equal(all.documents.length, all.total);
    });

    it('applies filters: scalar equality, any-of list, AND across fields, empty list matches nothing', async () => {
      const text = 'personal data breach overtime consumers erasure';
      assert.deepEqual(await ids({ query: text, filters: { jurisdiction: 'EU' } }), ['gdpr-17', 'gdpr-33', 'guidance']);
      assert.deepEqual(await ids({ query: text, filters: { jurisdiction: ['US', 'US-CA'] } }), ['ccpa', 'flsa']);
      assert.deepEqual(await ids({ query: text, filters: { jurisdiction: 'EU', binding: true } }), ['gdpr-17', 'gdpr-33']);
      assert.deepEqual(await ids({ query: text, filters: { jurisdiction: 'eu' } }), []);
      assert.deepEqual(await ids({ query: text, filters: { year: '2016' } }), ['guidance']);
      assert.deepEqual(await ids({ query: text, filters: { jurisdiction: [] } }), []);
      assert.equal((await hits({ query: text, filters: { jurisdiction: 'EU' }, top_k: 1 })).total, 3);
    });

    it('accepts the match-clause forms', async () => {
      assert.deepEqual(await ids({ query: { match: 'overtime' } }), ['flsa']);
      assert.deepEqual(await ids({ query: { match: { text: 'overtime' } } }), ['flsa']);
      assert.deepEqual(await ids({ query: { match: { title: 'overtime' } } }), ['flsa']);
      assert.deepEqual(await ids({ query: { match: { title: 'controller' } } }), []);
      assert.deepEqual(await ids({ query: { match: { text: { query: 'controller' } } } }), ['gdpr-17', 'gdpr-33']);
      assert.deepEqual(await ids({ query: { match: { category: 'employment' } } }), ['flsa']);
      assert.deepEqual(await ids({ query: { match: { nobody_has_this: 'employment' } } }), []);
    });

    it('answers 200 with total 0 when nothing matches or only stopwords remain', async () => {
      assert.deepEqual(await hits({ query: 'xylophone' }), { total: 0, documents: [] });
      assert.deepEqual(await hits({ query: [...STOPWORDS].join(' ') }), { total: 0, documents: [] });
    });

    it('treats query text as plain text: operators and syntax characters never cause an error', async () => {
      for (const text of [
        '"unbalanced',
        '( breach',
        'breach)',
        'a*',
        'title:breach',
        '^x',
        '-breach',
        'breach AND',
        'OR NOT',
        'NEAR(a b)',
        '{}',
        '\\',
        "'; DROP TABLE documents; --",
      ]) {
        const response = await query({ query: text });
        assert.equal(response.statusCode, 200, `${text}: ${response.body}`);
      }
      assert.ok((await hits({ query: 'title:breach' })).total >= 1);
    });

    it('handles non-Latin scripts and a 10 KB query', async () => {
      assert.equal((await query({ query: 'データ保護 защита данных حماية البيانات' })).statusCode, 200);
      const long = 'breach privacy '.repeat(700);
      assert.ok(long.length > 10_000);
      assert.ok((await hits({ query: long })).total >= 2);
    });

    it('finds a compound written with or without its hyphen', async () => {
      const own = await createTestApp({
        documents: [
          { docId: 'joined', title: 'IL-6 in sepsis', text: 'Serum IL-6 rises within hours.', metadata: {} },
          { docId: 'solid', title: 'IL6 assays', text: 'Measuring IL6 in plasma.', metadata: {} },
          { docId: 'apart', title: 'Chapter 6', text: 'The il of the river, part 6.', metadata: {} },
        ],
      });
      try {
        const ownKey = await own.createKey(10);
        const ask = async (text: string) =>
          json(await own.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': ownKey }, payload: { query: text } })).resp.body.hits;
        const solid = await ask('IL6');
        assert.deepEqual(solid.documents.map((document: any) => document.doc_id).sort(), ['joined', 'solid']);
        const hyphenated = await ask('il-6');
        assert.equal(hyphenated.total, 3, 'the parts still match on their own');
        assert.equal(hyphenated.documents[0].doc_id, 'joined', 'parts and joined word all match');
      } finally {
        await own.close();
      }
    });

    it('accepts and ignores extra body fields', async () => {
      assert.equal((await query({ query: 'breach', explain: true, nested: { a: [1] } })).statusCode, 200);
    });
  });

  describe('errors (none charged)', () => {
    let own: string;
    before(async () => {
      own = await context.createKey(5);
    });
    after(async () => {
      assert.equal(await context.balanceOf(own), 5, 'no rejected request was charged');
    });
    const rejected = async (payload: unknown, pattern: RegExp, headers: Record<string, string> = {}) =>
      assertEnvelope(await query(payload, { 'x-api-key': own, ...headers }), 400, pattern);

    it('answers 400 naming query when it is missing, empty, blank or of the wrong type', async () => {
      for (const payload of [{}, { query: '' }, { query: '   ' }, { query: 5 }, { query: null }, { query: ['a'] }, { top_k: 3 }]) {
        await rejected(payload, /query/);
      }
    });

    it('answers 400 to malformed match clauses', async () => {
      for (const clause of [
        {},
        { match: '' },
        { match: {} },
        { match: { text: 'a', title: 'b' } },
        { match: { text: 5 } },
        { term: { a: { nested: 'b' } } },
        { match: 'a', extra: 1 },
      ]) {
        await rejected({ query: clause }, /query/);
      }
    });

    it('answers 400 to a top_k that is not an integer from 1 to 100, with no coercion', async () => {
      for (const topK of ['5', 1.5, 0, 101, -1, null, true]) await rejected({ query: 'breach', top_k: topK }, /top_k/);
    });

    it('answers 400 to filters that are not an object of scalars or lists', async () => {
      for (const filters of ['EU', ['EU'], 5, { jurisdiction: { eq: 'EU' } }, { jurisdiction: [['EU']] }, { a: [{ b: 1 }] }]) {
        await rejected({ query: 'breach', filters }, /filters/);
      }
    });

    it('answers 400 to a body that is not a JSON object', async () => {
      await rejected('[]', /body|query/);
      await rejected('"breach"', /body|query/);
      await rejected('null', /body|query/);
      await rejected('{"query": "breach"', /JSON/);
      await rejected('', /empty|JSON/);
    });

    it('answers 400 when Content-Type is not application/json', async () => {
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        await rejected('{"query":"breach"}', /Content-Type/, { 'content-type': contentType });
      }
      const noType = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': own },
        payload: Buffer.from('{"query":"x"}'),
      });
      assertEnvelope(noType, 400);
    });
  });

  describe('security', () => {
    it('drops __proto__ keys: the query runs as if they were absent, and no object is polluted', async () => {
      const response = await query('{"query":"breach","__proto__":{"admin":true,"top_k":1}}');
      assert.equal(response.statusCode, 200);
      assert.ok(json(response).resp.body.hits.documents.length > 1, 'top_k inside __proto__ was not read');
      assert.equal(({} as Record<string, unknown>).admin, undefined);
    });

    it('validates the body before authenticating: a bad body with an unknown key is 400', async () => {
      assertEnvelope(await query({}, { 'x-api-key': 'cd'.repeat(32) }), 400, /query/);
    });
  });
});
