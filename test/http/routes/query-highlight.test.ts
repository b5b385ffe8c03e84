import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

const DOCUMENTS: DocumentRecord[] = [
  {
    docId: 'gdpr-33',
    title: 'Notifying a personal data breach',
    text: `${'Recitals and definitions come first. '.repeat(12)}A controller notifies a personal data breach within 72 hours. ${'Later paragraphs follow. '.repeat(12)}`,
    metadata: { jurisdiction: 'EU', year: 2016, court: 'Court of Justice', tags: ['privacy'] },
  },
  {
    docId: 'planted',
    title: '<img src=x onerror=alert(1)> breaches',
    text: 'Several <b>breaches</b> & "quotes".',
    metadata: { jurisdiction: 'UK' },
  },
  { docId: 'other', title: 'Contract law', text: 'Offer and acceptance.', metadata: { jurisdiction: 'UK', year: 1990 } },
];

describe('POST /query with fields and highlights', () => {
  let context: TestContext;
  let key: string;
  before(async () => {
    context = await createTestApp({ documents: DOCUMENTS });
    key = await context.createKey(100);
  });
  after(() => context.close());

  const query = (payload: Record<string, unknown>) => context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload });
  const documentsOf = (response: Parameters<typeof json>[0]) => json(response).resp.body.hits.documents as Array<Record<string, any>>;

  it('ranks, counts and charges exactly as without them, one credit', async () => {
    const plain = await query({ query: 'breach' });
    const before = await context.balanceOf(key);
    const rich = await query({ query: 'breach', highlight: true, fields: ['jurisdiction'] });
    assert.equal(rich.statusCode, 200, rich.body);
    assert.equal(await context.balanceOf(key), before - 1);
    assert.equal(rich.headers['x-credits-charged'], '1');
    assert.equal(json(rich).resp.body.hits.total, json(plain).resp.body.hits.total);
    assert.deepEqual(
      documentsOf(rich).map(({ doc_id, title, confidence }) => ({ doc_id, title, confidence })),
      documentsOf(plain),
    );
  });

  it('marks the analysed matches in the title and the best snippet of the text, escaping planted HTML', async () => {
    // typos: 0, as no document holds "notification": auto would match "notifying" through it (and mark it).
    const hits = documentsOf(await query({ query: 'breach notification', highlight: true, typos: 0 }));
    const gdpr = hits.find((hit) => hit.doc_id === 'gdpr-33');
    assert.equal(gdpr?.highlights.title, 'Notifying a personal data <mark>breach</mark>');
    assert.match(gdpr?.highlights.text, /^….*<mark>breach<\/mark> within 72 hours.*…$/);
    const planted = hits.find((hit) => hit.doc_id === 'planted');
    assert.deepEqual(planted?.highlights, {
      title: '&lt;img src=x onerror=alert(1)&gt; <mark>breaches</mark>',
      text: 'Several &lt;b&gt;<mark>breaches</mark>&lt;/b&gt; &amp; &quot;quotes&quot;.',
    });
    assert.equal(planted?.fields, undefined, 'no fields unless asked');
  });

  it('takes its own tags, snippet length and fields, and gives raw text when escape is false', async () => {
    const hits = documentsOf(
      await query({
        query: 'justice breach',
        highlight: { fields: ['title', 'court'], pre_tag: '[', post_tag: ']', escape: false },
        fields: ['*'],
      }),
    );
    const gdpr = hits.find((hit) => hit.doc_id === 'gdpr-33');
    assert.deepEqual(gdpr?.highlights, { title: 'Notifying a personal data [breach]', court: 'Court of [Justice]' });
    assert.deepEqual(gdpr?.fields, DOCUMENTS[0]?.metadata);
    const planted = hits.find((hit) => hit.doc_id === 'planted');
    assert.deepEqual(planted?.highlights, { title: '<img src=x onerror=alert(1)> [breaches]' });
  });

  it('returns the named fields a document has, and none it lacks', async () => {
    const hits = documentsOf(await query({ query: 'breach', fields: ['year', 'jurisdiction', 'nowhere'] }));
    assert.deepEqual(hits.find((hit) => hit.doc_id === 'gdpr-33')?.fields, { year: 2016, jurisdiction: 'EU' });
    assert.deepEqual(hits.find((hit) => hit.doc_id === 'planted')?.fields, { jurisdiction: 'UK' });
  });

  it('refuses an unknown highlight option or a bad value with a 400 naming it, uncharged', async () => {
    const before = await context.balanceOf(key);
    const unknown = await query({ query: 'breach', highlight: { fragment_size: 10 } });
    assertEnvelope(unknown, 400);
    assert.match(json(unknown).message, /fragment_size/);
    const tooShort = await query({ query: 'breach', highlight: { snippet_chars: 5 } });
    assertEnvelope(tooShort, 400);
    assert.match(json(tooShort).message, /highlight/);
    const badFields = await query({ query: 'breach', fields: 'year' });
    assertEnvelope(badFields, 400);
    assert.match(json(badFields).message, /fields/);
    assert.equal(await context.balanceOf(key), before);
  });
});
