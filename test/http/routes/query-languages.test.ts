import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminTokens } from '../../../src/admin/admin-tokens.js';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { languageNamed } from '../../../src/search/engine/languages.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';

const DOCUMENTS: DocumentRecord[] = [
  {
    docId: 'de-1',
    title: 'Verträgen über die Arbeitsweise',
    text: 'Die Mitgliedstaaten schließen Verträge über den Schutz personenbezogener Daten.',
    metadata: { language: 'de' },
  },
  { docId: 'de-2', title: 'Häuser und Straßen', text: 'Die Häuser stehen an der Straße.', metadata: { language: 'de' } },
  {
    docId: 'fr-1',
    title: 'Protection des données personnelles',
    text: 'Le règlement protège les données personnelles des citoyens.',
    metadata: { language: 'fr' },
  },
  { docId: 'ja-1', title: '個人データの保護', text: '個人データの保護に関する規則は欧州連合で適用される。', metadata: { language: 'ja' } },
  { docId: 'en-1', title: 'Treaty on contracts', text: 'The contracting parties signed the treaties.', metadata: {} },
  { docId: 'en-2', title: 'Vertrag as a loanword', text: 'A text in English that names the Vertrag once.', metadata: {} },
];

describe('POST /query in the documents’ languages', () => {
  let context: TestContext;
  let key: string;
  let writer: string;
  before(async () => {
    context = await createTestApp({ documents: DOCUMENTS });
    key = await context.createKey(10_000);
    writer = `Bearer ${(await new AdminTokens(context.store.admin).create('cms', false)).token}`;
  });
  after(() => context.close());

  const query = async (body: Record<string, unknown>) => {
    const response = await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: body });
    return { status: response.statusCode, body: json(response) };
  };
  const ids = async (body: Record<string, unknown>) => {
    const { status, body: answer } = await query(body);
    assert.equal(status, 200, JSON.stringify(answer));
    return (answer.resp.body.hits.documents as Array<{ doc_id: string }>).map((document) => document.doc_id).sort();
  };

  it('a German query finds German inflections, which English analysis does not', async () => {
    assert.deepEqual(await ids({ query: 'Verträgen', language: 'de' }), ['de-1', 'en-2']);
    assert.deepEqual(await ids({ query: 'Vertrag', language: 'de' }), ['de-1', 'en-2']);
    assert.deepEqual(await ids({ query: 'Häuser', language: 'de' }), ['de-2']);
    assert.deepEqual(await ids({ query: 'haus strasse', language: 'de' }), ['de-2'], 'typed without umlauts or ß');
    // English leaves "vertragen" as it is: the German document's stem "vertrag" is not found.
    assert.deepEqual(await ids({ query: 'Verträgen', typos: 0 }), []);
  });

  it('a German stopword is dropped from a German query, so "and" asks only for the words that count', async () => {
    assert.deepEqual(await ids({ query: 'die Verträge über Daten', language: 'de', operator: 'and' }), ['de-1']);
    assert.deepEqual(await ids({ query: 'die', language: 'de' }), []);
  });

  it('French: "données personnelles" finds "donnée personnelle" and the words typed without accents', async () => {
    assert.deepEqual(await ids({ query: 'donnée personnelle', language: 'fr', operator: 'and' }), ['fr-1']);
    assert.deepEqual(await ids({ query: 'donnees reglement', language: 'fr', operator: 'and' }), ['fr-1']);
    assert.deepEqual(await ids({ query: { match_phrase: { text: 'données personnelle' } }, language: 'fr' }), ['fr-1']);
  });

  it('Japanese text is split into words, so a word inside a sentence is found and highlighted', async () => {
    assert.deepEqual(await ids({ query: '保護', language: 'ja' }), ['ja-1']);
    assert.deepEqual(await ids({ query: '欧州連合の規則', language: 'ja', operator: 'and' }), ['ja-1']);
    const { body } = await query({ query: '保護', language: 'ja', highlight: true });
    assert.equal(body.resp.body.hits.documents[0].highlights.title, '個人データの<mark>保護</mark>');
  });

  it('highlights mark the inflections the language matched', async () => {
    const { body } = await query({ query: 'Vertrag', language: 'de', highlight: { fields: ['title'] }, filters: { language: 'de' } });
    assert.equal(body.resp.body.hits.documents[0].highlights.title, '<mark>Verträgen</mark> über die Arbeitsweise');
  });

  it('facets count language, and filters take it', async () => {
    const { body } = await query({ query: { match_all: {} }, facets: ['language'] });
    assert.deepEqual(body.resp.body.facets.language, { de: 2, fr: 1, ja: 1 });
    assert.deepEqual(await ids({ query: 'Vertrag', language: 'de', filters: { language: 'de' } }), ['de-1']);
  });

  it('an unknown query language is a 400 naming the codes, uncharged', async () => {
    const before = await context.balanceOf(key);
    for (const language of ['german', 'DE', 'xx', 3]) {
      const response = await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query: 'x', language } });
      assertEnvelope(response, 400, /language must be one of da, de, en/);
    }
    assert.equal(await context.balanceOf(key), before);
  });

  it('an ingest with an unknown document language writes nothing and names the record', async () => {
    const ingest = (records: unknown[]) =>
      context.app.inject({
        method: 'POST',
        url: '/admin/documents',
        headers: { authorization: writer, 'content-type': 'application/json' },
        payload: JSON.stringify(records),
      });
    const response = await ingest([
      { doc_id: 'it-1', title: 'Contratti', text: 'I contratti firmati.', language: 'it' },
      { doc_id: 'xx-1', title: 'Unknown', text: 'Klingon text.', language: 'tlh' },
    ]);
    assertEnvelope(response, 400, /index 1: language must be one of .*got "tlh"/);
    assert.deepEqual(await ids({ query: 'contratto', language: 'it', typos: 0 }), []);
    assert.deepEqual(json(await ingest([{ doc_id: 'it-1', title: 'Contratti', text: 'I contratti firmati.', language: 'it' }])), { ingested: 1 });
    assert.deepEqual(await ids({ query: 'contratto', language: 'it', typos: 0 }), ['it-1']);
  });
});

describe('SEARCH_LANGUAGE: the corpus language for documents and queries without their own', () => {
  let context: TestContext;
  let key: string;
  before(async () => {
    context = await createTestApp({
      documents: [
        { docId: 'plain', title: 'Die Verträgen', text: 'Ohne eigene Sprache.', metadata: {} },
        { docId: 'english', title: 'Running contracts', text: 'The runner runs.', metadata: { language: 'en' } },
      ],
      language: languageNamed('de'),
    });
    key = await context.createKey(100);
  });
  after(() => context.close());

  const ids = async (body: Record<string, unknown>) => {
    const response = await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: body });
    assert.equal(response.statusCode, 200, response.body);
    return (json(response).resp.body.hits.documents as Array<{ doc_id: string }>).map((document) => document.doc_id);
  };

  it('analyses a document without a language, and a query without one, in German', async () => {
    assert.deepEqual(await ids({ query: 'Vertrag' }), ['plain']);
    assert.deepEqual(await ids({ query: 'Verträgen', language: 'en', typos: 0 }), [], 'English leaves "vertragen" unstemmed');
    assert.deepEqual(await ids({ query: 'running', language: 'en' }), ['english'], 'a document in English keeps its analysis');
  });
});
