import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

const DOCUMENTS: DocumentRecord[] = [
  { docId: 'walrus-1', title: 'Walrus tusks', text: 'Walruses use tusks to haul out on ice.', metadata: { region: 'arctic' } },
  { docId: 'walrus-2', title: 'Walrus diet', text: 'A walrus eats clams.', metadata: { region: 'arctic' } },
  { docId: 'seal-1', title: 'Seal pups', text: 'Seals nurse pups on ice.', metadata: { region: 'antarctic' } },
];

describe('admin API: POST /admin/search', () => {
  let context: TestContext;
  let reader: string;
  let keysOnly: string;
  before(async () => {
    context = await createTestApp({ documents: DOCUMENTS });
    reader = `Bearer ${(await new AdminTokens(context.store.admin).create('viewer', true)).token}`;
    keysOnly = `Bearer ${(await new AdminTokens(context.store.admin).create('keys', ['keys:read'])).token}`;
  });
  after(async () => context.close());

  const adminSearch = (payload: unknown, authorization = reader) =>
    context.app.inject({ method: 'POST', url: '/admin/search', headers: { authorization }, payload: payload as Record<string, unknown> });

  it("answers what /query's body holds for the same body, free and recorded as no key's usage", async () => {
    const body = { query: 'walrus ice', top_k: 2, facets: ['region'], highlight: true, fields: ['region'] };
    const key = await context.createKey(5);
    const paid = await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: body });
    const chargesBefore = (await context.store.ledger.usage({ from: '1970-01-01T00:00:00.000Z', to: '9999-01-01T00:00:00.000Z', bucket: 'day' }))
      .map((row) => row.count)
      .reduce((a, b) => a + b, 0);
    const free = await adminSearch(body);
    assert.equal(free.statusCode, 200, free.body);
    assert.deepEqual(json(free), json(paid).resp.body);
    assert.equal(json(free).hits.documents[0].highlights.title, '<mark>Walrus</mark> tusks');
    const chargesAfter = (await context.store.ledger.usage({ from: '1970-01-01T00:00:00.000Z', to: '9999-01-01T00:00:00.000Z', bucket: 'day' }))
      .map((row) => row.count)
      .reduce((a, b) => a + b, 0);
    assert.equal(chargesAfter, chargesBefore, 'no charge recorded');
    assert.equal(free.headers['x-credits-charged'], undefined);
  });

  it('needs documents:read, and refuses a bad body naming the field', async () => {
    assertEnvelope(await adminSearch({ query: 'walrus' }, keysOnly), 403, /documents:read/);
    assertEnvelope(await adminSearch({ query: 'walrus' }, 'Bearer msadmin_nope'), 401);
    assertEnvelope(await adminSearch({ query: '' }), 400);
    assertEnvelope(await adminSearch({ query: 'walrus', highlight: { pre: 'x' } }), 400, /pre/);
    assertEnvelope(await adminSearch({ query: 'walrus', mode: 'semantic' }), 400, /embedding/i);
  });
});
