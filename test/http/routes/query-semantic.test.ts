import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { documentsOfJsonLines } from '../../../src/documents/ingest.js';
import { EmbedderError } from '../../../src/embeddings/embedder.js';
import { startStandInEmbedder } from '../../../src/embeddings/stand-in/stand-in-embedder.js';
import { FaultProxy } from '../../support/fault-proxy.js';
import { assertEnvelope, createTestApp, documentsOf, json, standInEmbeddings, type TestContext } from '../../support/helper.js';

// Documents whose words the stand-in maps to concepts: "car" shares an axis with "automobile",
// "vehicle" and "truck", and with no word of the documents about cars.
const DOCUMENTS: DocumentRecord[] = [
  {
    docId: 'auto-recall',
    title: 'Automobile recall',
    text: 'The maker recalls vehicles with faulty brakes.',
    metadata: { region: 'north', kind: 'notice' },
  },
  { docId: 'truck-fleet', title: 'Truck fleet', text: 'A motorcar and truck garage opens downtown.', metadata: { region: 'south', kind: 'news' } },
  { docId: 'dismissal', title: 'Employee dismissal', text: 'Workers fired without notice may claim.', metadata: { region: 'north', kind: 'notice' } },
  {
    docId: 'privacy',
    title: 'Personal data rules',
    text: 'Confidential information records must be kept.',
    metadata: { region: 'south', kind: 'rule' },
  },
  { docId: 'weather', title: 'Weather report', text: 'Sunny skies then rain over the hills.', metadata: { region: 'north', kind: 'news' } },
  { docId: 'car-park', title: 'Car park prices', text: 'Parking near the station costs more.', metadata: { region: 'east', kind: 'news' } },
];

const DIMENSIONS = 64;

describe('POST /query with mode semantic and hybrid (stand-in embedder on loopback)', () => {
  let standIn: Awaited<ReturnType<typeof startStandInEmbedder>>;
  let proxy: FaultProxy;
  let context: TestContext;
  let lexicalOnly: TestContext;
  let key: string;

  before(async () => {
    standIn = await startStandInEmbedder({ dimensions: DIMENSIONS });
    proxy = await new FaultProxy(standIn.url.replace('/v1/embeddings', '')).start();
    context = await createTestApp({
      documents: DOCUMENTS,
      embeddings: standInEmbeddings(`${proxy.url}/v1/embeddings`, DIMENSIONS),
      settings: { prices: { '/query:semantic': 3 } },
    });
    lexicalOnly = await createTestApp({ documents: DOCUMENTS });
    key = await context.createKey(1000);
  });
  after(async () => {
    await context.close();
    await lexicalOnly.close();
    await proxy.stop();
    await standIn.close();
  });

  const query = (payload: object, on = context, apiKey = key) =>
    on.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': apiKey }, payload });
  const hitsOf = async (payload: object) => {
    const response = await query(payload);
    assert.equal(response.statusCode, 200, response.body);
    return json(response).resp.body;
  };
  const ids = (body: { hits: { documents: Array<{ doc_id: string }> } }) => body.hits.documents.map((document) => document.doc_id);

  it('semantic finds documents that share no word with the prompt; lexical does not', async () => {
    const semantic = await hitsOf({ query: 'automobile', mode: 'semantic' });
    assert.deepEqual(ids(semantic).slice(0, 2).sort(), ['auto-recall', 'truck-fleet']);
    assert.ok(ids(semantic).includes('car-park'));
    assert.ok(!ids(semantic).includes('weather'), 'a document of no known concept is not similar at all');
    assert.equal(semantic.hits.total, semantic.hits.documents.length);
    const lexical = await hitsOf({ query: 'automobile' });
    assert.deepEqual(ids(lexical), ['auto-recall']);
    const vehicleOnly = await hitsOf({ query: 'vehicle', mode: 'semantic', top_k: 1 });
    assert.ok(['auto-recall', 'truck-fleet'].includes(ids(vehicleOnly)[0]));
  });

  it('confidence stays in [0, 1] and never rises down the list, in every mode', async () => {
    for (const mode of ['semantic', 'hybrid', 'lexical']) {
      const body = await hitsOf({ query: 'car fleet workers', mode });
      const confidences = body.hits.documents.map((document: { confidence: number }) => document.confidence);
      assert.ok(confidences.length > 0, mode);
      confidences.forEach((confidence: number, index: number) => {
        assert.ok(confidence >= 0 && confidence <= 1, `${mode}: ${confidence}`);
        if (index > 0) assert.ok(confidence <= confidences[index - 1], `${mode}: ${confidences}`);
      });
    }
  });

  it('lexical results are those of a service without an embedder', async () => {
    const other = await lexicalOnly.createKey(100);
    for (const payload of [
      { query: 'car' },
      { query: 'truck garage', top_k: 3 },
      { query: 'notice', facets: ['region'] },
      { query: 'data', mode: 'lexical' },
    ]) {
      const mine = await query(payload);
      const theirs = await query(payload, lexicalOnly, other);
      assert.equal(mine.statusCode, 200);
      assert.deepEqual(json(mine).resp, json(theirs).resp);
    }
  });

  it('hybrid fuses both: the word match and the near documents, counted once each', async () => {
    const body = await hitsOf({ query: 'car', mode: 'hybrid', facets: ['region'] });
    assert.equal(ids(body)[0], 'car-park', 'in both rankings, first');
    assert.deepEqual(ids(body).slice(1).sort(), ['auto-recall', 'truck-fleet']);
    assert.equal(body.hits.total, 3);
    assert.deepEqual(body.facets, { region: { east: 1, north: 1, south: 1 } });
  });

  it('hybrid with words and a phrase no document holds beside them: every near document counts, those holding the words included', async () => {
    const body = { query: 'car "prices park"', operator: 'and' };
    const lexical = await hitsOf(body);
    assert.equal(lexical.hits.total, 0, 'no document holds car and the phrase');
    const semantic = await hitsOf({ ...body, mode: 'semantic', top_k: 100 });
    const hybrid = await hitsOf({ ...body, mode: 'hybrid', top_k: 100 });
    assert.ok(ids(semantic).includes('car-park'), "a near document holding car, and the phrase's words apart");
    assert.equal(hybrid.hits.total, semantic.hits.total);
    assert.deepEqual(ids(hybrid).sort(), ids(semantic).sort());
  });

  it('filters and facets hold in semantic mode', async () => {
    const filtered = await hitsOf({ query: 'car', mode: 'semantic', filters: { region: 'south' }, facets: ['kind'] });
    assert.deepEqual(ids(filtered), ['truck-fleet']);
    assert.equal(filtered.hits.total, 1);
    assert.deepEqual(filtered.facets, { kind: { news: 1 } });
    const all = await hitsOf({ query: 'car', mode: 'semantic', facets: ['region', 'kind'] });
    assert.deepEqual(all.facets, { region: { east: 1, north: 1, south: 1 }, kind: { news: 2, notice: 1 } });
  });

  it('pages of a semantic ranking neither overlap nor skip', async () => {
    const whole = ids(await hitsOf({ query: 'car workers data', mode: 'semantic', top_k: 10 }));
    const pages = [0, 2, 4].map((offset) => hitsOf({ query: 'car workers data', mode: 'semantic', top_k: 2, offset }));
    assert.deepEqual((await Promise.all(pages)).flatMap(ids), whole.slice(0, 6));
  });

  it('prices modes apart: PRICES names /query:semantic; hybrid costs what /query does', async () => {
    const priced = await context.createKey(10);
    const semantic = await query({ query: 'car', mode: 'semantic' }, context, priced);
    assert.equal(semantic.headers['x-credits-charged'], '3');
    const hybrid = await query({ query: 'car', mode: 'hybrid' }, context, priced);
    assert.equal(hybrid.headers['x-credits-charged'], '1');
    assert.equal(await context.balanceOf(priced), 6);
  });

  it('an embedder answering 5xx: semantic is a 503 and hybrid answers lexically and says so, both uncharged', async () => {
    const before = await context.balanceOf(key);
    proxy.faults.push({ kind: 'answer', status: 500, body: '{"error":{"message":"overloaded"}}' }, { kind: 'answer', status: 503, body: '' });
    const semantic = await query({ query: 'an unseen prompt about trucks', mode: 'semantic' });
    assertEnvelope(semantic, 503, /embedding model did not answer/);
    assert.equal(semantic.headers['retry-after'], '5');
    assert.equal(await context.balanceOf(key), before);
    proxy.faults.push({ kind: 'answer', status: 500, body: '' }, { kind: 'answer', status: 500, body: '' });
    const hybrid = await query({ query: 'car unseen', mode: 'hybrid' });
    assert.equal(hybrid.statusCode, 200);
    assert.equal(hybrid.headers['x-search-fallback'], 'lexical');
    assert.deepEqual(ids(json(hybrid).resp.body), ['car-park']);
    assert.equal(hybrid.headers['x-credits-charged'], '0');
    assert.equal(await context.balanceOf(key), before, 'a hybrid query answered lexically is not charged');
  });

  it('while the vector index is still being built after a start: semantic is a 503 and hybrid answers lexically, both uncharged', async () => {
    let vectorsReady = false;
    const building = await createTestApp({
      documents: DOCUMENTS,
      embeddings: standInEmbeddings(standIn.url, DIMENSIONS),
      index: (stored) => ({
        search: (request) => stored.search(request),
        prepareSearch: () => stored.prepareSearch(),
        semanticReady: () => vectorsReady,
      }),
    });
    try {
      const apiKey = await building.createKey(10);
      const semantic = await query({ query: 'automobile', mode: 'semantic' }, building, apiKey);
      assertEnvelope(semantic, 503, /vector index is still being built/);
      assert.equal(semantic.headers['retry-after'], '30');
      assert.equal(await building.balanceOf(apiKey), 10);
      const hybrid = await query({ query: 'car', mode: 'hybrid' }, building, apiKey);
      assert.equal(hybrid.headers['x-search-fallback'], 'lexical');
      assert.deepEqual(ids(json(hybrid).resp.body), ['car-park']);
      assert.equal(await building.balanceOf(apiKey), 10, 'a hybrid query answered lexically is not charged');
      vectorsReady = true;
      const built = await query({ query: 'automobile', mode: 'semantic' }, building, apiKey);
      assert.equal(built.statusCode, 200, built.body);
      assert.equal(built.headers['x-search-fallback'], undefined);
      assert.ok(ids(json(built).resp.body).includes('truck-fleet'));
    } finally {
      await building.close();
    }
  });

  it('an embedder that does not answer in time: semantic is a 503, uncharged', async () => {
    const before = await context.balanceOf(key);
    proxy.faults.push({ kind: 'hang' }, { kind: 'hang' });
    const semantic = await query({ query: 'yet another unseen prompt', mode: 'semantic' });
    assertEnvelope(semantic, 503);
    assert.equal(await context.balanceOf(key), before);
  });

  it('a repeated prompt is answered from the cache: no call to the embedder', async () => {
    await hitsOf({ query: 'cached prompt about employees', mode: 'semantic' });
    const calls = proxy.seen.length;
    await hitsOf({ query: 'cached prompt about employees', mode: 'semantic' });
    await hitsOf({ query: 'cached prompt about employees', mode: 'hybrid' });
    assert.equal(proxy.seen.length, calls);
  });

  it('a re-ingest of unchanged text costs no call; changed text is embedded; a deletion leaves semantic results', async () => {
    const calls = proxy.seen.length;
    await context.store.documents.ingestDocuments(documentsOf(DOCUMENTS.slice(0, 3)));
    assert.equal(proxy.seen.length, calls);
    await context.store.documents.ingestDocuments(
      documentsOf([
        {
          docId: 'weather',
          title: 'Weather for drivers',
          text: 'Rain on the motorway: every vehicle slows.',
          metadata: { region: 'north', kind: 'news' },
        },
      ]),
    );
    assert.equal(proxy.seen.length, calls + 1);
    assert.ok(ids(await hitsOf({ query: 'car', mode: 'semantic' })).includes('weather'));
    await context.store.documents.deleteDocument('weather');
    assert.ok(!ids(await hitsOf({ query: 'car', mode: 'semantic' })).includes('weather'));
  });

  it('an ingest the embedder refuses writes nothing', async () => {
    const count = await context.store.documents.countDocuments();
    proxy.faults.push({ kind: 'answer', status: 500, body: '' }, { kind: 'answer', status: 500, body: '' });
    await assert.rejects(
      context.store.documents.ingestDocuments(
        documentsOf([{ docId: 'new-one', title: 'Lorry news', text: 'A new lorry', metadata: {} }, ...DOCUMENTS]),
      ),
      (error: Error) => error instanceof EmbedderError && /answered 500 \(after 2 attempts\)/.test(error.message),
    );
    assert.equal(await context.store.documents.countDocuments(), count);
    assert.equal((await hitsOf({ query: 'lorry' })).hits.total, 0);
  });

  it('a mode that is not one of the three is a 400, uncharged', async () => {
    const before = await context.balanceOf(key);
    assertEnvelope(await query({ query: 'car', mode: 'neural' }), 400, /mode must be "lexical", "semantic" or "hybrid"/);
    assert.equal(await context.balanceOf(key), before);
  });
});

describe('POST /query semantic without an embedder, or with one of the wrong length', () => {
  it('without EMBEDDINGS_URL, semantic and hybrid are a 400, uncharged; lexical works', async () => {
    const context = await createTestApp({ documents: DOCUMENTS });
    try {
      const key = await context.createKey(5);
      for (const mode of ['semantic', 'hybrid']) {
        const response = await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: { query: 'car', mode } });
        assertEnvelope(response, 400, /no embedding model configured/);
      }
      assert.equal(await context.balanceOf(key), 5);
    } finally {
      await context.close();
    }
  });

  it('vectors of the wrong length: the ingest is refused naming the endpoint and the dimensions, and semantic is a 503', async () => {
    const standIn = await startStandInEmbedder({ dimensions: 32 });
    const context = await createTestApp({ documents: [], embeddings: standInEmbeddings(standIn.url, DIMENSIONS) });
    try {
      await assert.rejects(context.store.documents.ingestDocuments(documentsOf(DOCUMENTS)), (error: Error) => {
        assert.ok(error instanceof EmbedderError);
        assert.match(
          error.message,
          new RegExp(`${standIn.url.replace(/[.[\]]/g, '\\$&')} answered vectors of 32 dimensions.*EMBEDDINGS_DIMENSIONS is 64`),
        );
        return true;
      });
      assert.equal(await context.store.documents.countDocuments(), 0);
      const key = await context.createKey(5);
      const response = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key },
        payload: { query: 'car', mode: 'semantic' },
      });
      assertEnvelope(response, 503);
      assert.equal(await context.balanceOf(key), 5);
    } finally {
      await context.close();
      await standIn.close();
    }
  });
});

describe("the README's semantic example, with the stand-in embedder and the demo corpus", () => {
  it('"can my employer fire me" finds the dismissal law first, semantic and hybrid alike', async () => {
    const standIn = await startStandInEmbedder({ dimensions: DIMENSIONS });
    const demo = [...documentsOfJsonLines(readFileSync(new URL('../../../demo/corpus.jsonl', import.meta.url), 'utf8'))];
    const context = await createTestApp({ documents: demo, embeddings: standInEmbeddings(standIn.url, DIMENSIONS) });
    try {
      const key = await context.createKey(10);
      for (const mode of ['semantic', 'hybrid']) {
        const response = await context.app.inject({
          method: 'POST',
          url: '/query',
          headers: { 'x-api-key': key },
          payload: { query: 'can my employer fire me', mode, top_k: 3 },
        });
        assert.equal(response.statusCode, 200, response.body);
        const found = json(response).resp.body.hits.documents.map((document: { doc_id: string }) => document.doc_id);
        assert.equal(found[0], 'uk-unfair-dismissal', `${mode}: ${found}`);
      }
    } finally {
      await context.close();
      await standIn.close();
    }
  });
});
