import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

describe('admin API: documents', () => {
  let context: TestContext;
  let writer: string;
  let reader: string;
  before(async () => {
    context = await createTestApp();
    writer = `Bearer ${(await new AdminTokens(context.store.admin).create('cms', false)).token}`;
    reader = `Bearer ${(await new AdminTokens(context.store.admin).create('viewer', true)).token}`;
  });
  after(async () => context.close());

  const search = async (query: string) => {
    const key = await context.createKey(1);
    const response = await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query } });
    return json(response).resp.body.hits.documents.map((document: { doc_id: string }) => document.doc_id) as string[];
  };
  const ingest = (payload: string, contentType: string, authorization = writer) =>
    context.app.inject({ method: 'POST', url: '/admin/documents', headers: { authorization, 'content-type': contentType }, payload });

  it('ingests a JSON array or JSON lines, searchable at once', async () => {
    const array = JSON.stringify([{ doc_id: 'walrus-1', title: 'Walrus tusks', text: 'Walruses use tusks to haul out.', region: 'arctic' }]);
    assert.deepEqual(json(await ingest(array, 'application/json')), { ingested: 1 });
    const lines = `${JSON.stringify({ id: 'walrus-2', title: 'Walrus diet', body: 'Walruses eat clams.' })}\n\n${JSON.stringify({ id: 7, text: 'seven' })}\n`;
    assert.deepEqual(json(await ingest(lines, 'application/x-ndjson')), { ingested: 2 });
    assert.deepEqual((await search('walrus')).sort(), ['walrus-1', 'walrus-2']);
    const shown = json(await context.app.inject({ url: '/admin/documents/walrus-1', headers: { authorization: reader } }));
    assert.deepEqual(shown, { doc_id: 'walrus-1', title: 'Walrus tusks', text: 'Walruses use tusks to haul out.', region: 'arctic' });
  });

  it('writes nothing from a body with a bad record, and names it', async () => {
    const lines = `${JSON.stringify({ doc_id: 'narwhal-1', text: 'Narwhal tusks.' })}\n{"doc_id": 3.5e400}\n`;
    assertEnvelope(await ingest(lines, 'application/x-ndjson'), 400, /line 2.*Nothing was written/);
    assertEnvelope(await ingest(JSON.stringify([{ doc_id: 'narwhal-2' }, { title: 'no id' }]), 'application/json'), 400, /index 1/);
    assertEnvelope(await ingest('{"doc_id": "x"}', 'application/json'), 400, /array/);
    assert.deepEqual(await search('narwhal'), []);
  });

  it('deletes a document from search and /document; a read-only token may not', async () => {
    await ingest(JSON.stringify([{ doc_id: 'orca-1', text: 'Orcas hunt in pods.' }]), 'application/json');
    assertEnvelope(await context.app.inject({ method: 'DELETE', url: '/admin/documents/orca-1', headers: { authorization: reader } }), 403);
    assertEnvelope(await ingest('[]', 'application/json', reader), 403);
    assert.deepEqual(json(await context.app.inject({ method: 'DELETE', url: '/admin/documents/orca-1', headers: { authorization: writer } })), {
      deleted: 'orca-1',
    });
    assert.deepEqual(await search('orcas'), []);
    assertEnvelope(await context.app.inject({ url: '/admin/documents/orca-1', headers: { authorization: reader } }), 404);
    assertEnvelope(await context.app.inject({ method: 'DELETE', url: '/admin/documents/orca-1', headers: { authorization: writer } }), 404);
    const actions = json(await context.app.inject({ url: '/admin/audit-log?limit=5', headers: { authorization: reader } })).entries.map(
      (entry: { action: string }) => entry.action,
    );
    assert.equal(actions[0], 'documents.delete');
  });
});
