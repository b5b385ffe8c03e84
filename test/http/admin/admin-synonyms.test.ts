import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { PostgresStore } from '../../../src/store/postgres-store.js';
import { createTestApp, eventually, json, type TestContext } from '../../support/helper.js';
import { pagedRanking } from '../../support/paged-ranking.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES } from '../../support/pg.js';

const DOCUMENTS: DocumentRecord[] = [
  { docId: 'car-1', title: 'Car insurance', text: 'Insuring a car against theft.', metadata: {} },
  { docId: 'auto-1', title: 'Automobile registration', text: 'Every automobile is registered.', metadata: {} },
  { docId: 'motor-1', title: 'Motor vehicle tax', text: 'A motor vehicle pays a yearly tax.', metadata: {} },
  { docId: 'apart-1', title: 'Vehicle parts', text: 'A motor drives the pump; the vehicle is a cart.', metadata: {} },
  { docId: 'gdpr-1', title: 'GDPR fines', text: 'Fines under the GDPR.', metadata: {} },
  { docId: 'reg-1', title: 'General Data Protection Regulation', text: 'The general data protection regulation of 2016.', metadata: {} },
  { docId: 'other-1', title: 'Harbour fees', text: 'Fees for mooring.', metadata: {} },
];

const RULES = [{ words: ['car', 'automobile', 'motor vehicle'] }, { from: 'gdpr', to: ['general data protection regulation'] }];

describe('admin API: GET and PUT /admin/synonyms, applied by /query', () => {
  let context: TestContext;
  let reader: string;
  let writer: string;
  let key: string;
  before(async () => {
    context = await createTestApp({ documents: DOCUMENTS });
    reader = `Bearer ${(await new AdminTokens(context.store.admin).create('viewer', ['documents:read'])).token}`;
    writer = `Bearer ${(await new AdminTokens(context.store.admin).create('editor', ['documents:read', 'documents:write', 'audit:read'])).token}`;
    key = await context.createKey(1000);
  });
  after(async () => context.close());

  const put = (payload: unknown, authorization = writer) =>
    context.app.inject({ method: 'PUT', url: '/admin/synonyms', headers: { authorization }, payload: payload as Record<string, unknown> });
  const ids = async (body: Record<string, unknown>) => new Set((await pagedRanking(context, key, body)).ids);

  it('starts empty, takes rules with documents:write only, audits the change and gives them back', async () => {
    const empty = await context.app.inject({ method: 'GET', url: '/admin/synonyms', headers: { authorization: reader } });
    assert.deepEqual(json(empty), { synonyms: [], version: 0, updated_at: null });
    assert.equal((await put({ synonyms: RULES }, reader)).statusCode, 403);
    const set = await put({ synonyms: RULES });
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(json(set).synonyms, RULES);
    assert.equal(json(set).version, 1);
    const read = await context.app.inject({ method: 'GET', url: '/admin/synonyms', headers: { authorization: reader } });
    assert.deepEqual(json(read), json(set));
    const audit = await context.app.inject({ method: 'GET', url: '/admin/audit-log', headers: { authorization: writer } });
    const entry = json(audit).entries.find((each: { action: string }) => each.action === 'synonyms.set');
    assert.equal(entry.actor, 'editor');
    assert.deepEqual(entry.detail, { rules: 2 });
  });

  it('a set: each member finds the others, a phrase member as a phrase; a document scores as the synonym it holds', async () => {
    await put({ synonyms: RULES });
    const every = new Set(['car-1', 'auto-1', 'motor-1']);
    assert.deepEqual(await ids({ query: 'car' }), every);
    assert.deepEqual(await ids({ query: 'automobile' }), every);
    // Typed as words, the member matches as words do (apart-1 holds both), and finds its set too.
    assert.deepEqual(await ids({ query: 'motor vehicle', operator: 'and' }), new Set([...every, 'apart-1']));
    const confidence = async (query: string, docId: string) => {
      const response = await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query, top_k: 10 } });
      return json(response).resp.body.hits.documents.find((document: { doc_id: string }) => document.doc_id === docId)?.confidence;
    };
    assert.equal(await confidence('car', 'auto-1'), await confidence('automobile', 'auto-1'));
    const marked = await context.app.inject({
      method: 'POST',
      url: '/query',
      headers: { 'x-api-key': key },
      payload: { query: 'car', highlight: true, top_k: 10 },
    });
    const titles = json(marked).resp.body.hits.documents.map((document: { highlights: { title: string } }) => document.highlights.title);
    assert.ok(titles.includes('<mark>Automobile</mark> registration'), JSON.stringify(titles));
    assert.ok(titles.includes('<mark>Motor vehicle</mark> tax'), JSON.stringify(titles));
  });

  it('a one-way rule: from finds to, not the other way; a change applies at once and none is a re-index', async () => {
    await put({ synonyms: RULES });
    assert.deepEqual(await ids({ query: 'gdpr' }), new Set(['gdpr-1', 'reg-1']));
    assert.deepEqual(await ids({ query: 'regulation' }), new Set(['reg-1']));
    await put({ synonyms: [] });
    assert.deepEqual(await ids({ query: 'gdpr' }), new Set(['gdpr-1']));
    assert.deepEqual(await ids({ query: 'car' }), new Set(['car-1']));
  });

  it('refuses rules past the limits, saying which, and changes nothing', async () => {
    await put({ synonyms: RULES });
    for (const [synonyms, named] of [
      [[{ words: ['car'] }], /synonyms/],
      [[{ from: 'one two three four five six seven eight nine ten eleven', to: ['x'] }], /synonyms\[0\].*11 words/],
      [[{ words: ['car', 'the'] }], /synonyms\[0\].*"the"/],
      [Array.from({ length: 10_001 }, (_, index) => ({ words: [`w${index}`, `v${index}`] })), /10001 rules/],
      [[{ words: ['car', 'auto'], extra: 1 }], /synonyms/],
    ] as const) {
      const refused = await put({ synonyms });
      assert.equal(refused.statusCode, 400, refused.body.slice(0, 200));
      assert.match(json(refused).message, named);
    }
    const read = await context.app.inject({ method: 'GET', url: '/admin/synonyms', headers: { authorization: reader } });
    assert.deepEqual(json(read).synonyms, RULES);
  });
});

describe('synonyms on two instances of one PostgreSQL', { skip: SKIP_POSTGRES }, () => {
  it('a change made on one applies on the other within a second', async () => {
    const database = await createTestDatabase();
    const [first, second] = await Promise.all([0, 1].map(() => PostgresStore.open({ url: database.url, ...PG_TEST_OPTIONS })));
    const one = await createTestApp({ documents: DOCUMENTS, store: first });
    const other = await createTestApp({ documents: DOCUMENTS, store: second });
    try {
      const token = `Bearer ${(await new AdminTokens(first.admin).create('editor', ['documents:write'])).token}`;
      const key = await one.createKey(1000);
      const found = async () => new Set((await pagedRanking(other, key, { query: 'gdpr' })).ids);
      await eventually(async () => assert.deepEqual(await found(), new Set(['gdpr-1'])), 5000);
      const set = await one.app.inject({ method: 'PUT', url: '/admin/synonyms', headers: { authorization: token }, payload: { synonyms: RULES } });
      assert.equal(set.statusCode, 200);
      const changed = Date.now();
      await eventually(async () => assert.deepEqual(await found(), new Set(['gdpr-1', 'reg-1'])), 1000);
      assert.ok(Date.now() - changed < 1000);
    } finally {
      await one.close();
      await other.close();
      await database.drop();
    }
  });
});
