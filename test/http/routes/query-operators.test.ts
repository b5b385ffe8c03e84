import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { createTestApp, json, type TestContext } from '../../support/helper.js';
import { pagedRanking } from '../../support/paged-ranking.js';
import { random } from '../../support/random.js';

// Words that are their own stems and no stopwords, so which documents hold a word is plain to see.
const WORDS = ['river', 'stone', 'glacier', 'ember', 'quarry', 'thistle', 'falcon', 'copper', 'lantern', 'harbour'];

function corpus(): DocumentRecord[] {
  const next = random(7);
  const pick = () => WORDS[Math.floor(next() ** 1.5 * WORDS.length)] as string;
  return Array.from({ length: 240 }, (_, index) => ({
    docId: `d${String(index).padStart(3, '0')}`,
    title: Array.from({ length: 1 + Math.floor(next() * 3) }, pick).join(' '),
    text: Array.from({ length: 2 + Math.floor(next() * 8) }, pick).join(' '),
    metadata: { year: 2020 + (index % 4) },
  }));
}

describe('POST /query with operator and exclusions, against a reading of the documents', () => {
  const documents = corpus();
  const holds = (docId: string, word: string) => {
    const document = documents.find((candidate) => candidate.docId === docId) as DocumentRecord;
    return `${document.title} ${document.text}`.split(' ').includes(word);
  };
  let context: TestContext;
  let key: string;
  before(async () => {
    context = await createTestApp({ documents });
    key = await context.createKey(10_000);
  });
  after(() => context.close());

  const ranking = (body: Record<string, unknown>) => pagedRanking(context, key, body);

  it('operator and: exactly the documents holding every word, in the order or ranks them', async () => {
    const next = random(11);
    for (let round = 0; round < 12; round++) {
      const words = [...new Set(Array.from({ length: 2 + (round % 2) }, () => WORDS[Math.floor(next() * WORDS.length)] as string))];
      const any = await ranking({ query: words.join(' ') });
      const every = await ranking({ query: words.join(' '), operator: 'and' });
      const expected = any.ids.filter((docId) => words.every((word) => holds(docId, word)));
      assert.equal(every.total, documents.filter((document) => words.every((word) => holds(document.docId, word))).length, words.join(' '));
      assert.deepEqual(every.ids, expected, words.join(' '));
    }
    assert.deepEqual(await ranking({ query: 'river unicorn', operator: 'and' }), { total: 0, ids: [] }, 'a word no document holds');
    assert.deepEqual(await ranking({ query: 'river stone', operator: 'or' }), await ranking({ query: 'river stone' }), 'or is the default');
  });

  it('-word: the documents holding it are left out of the matches, the total and the facets', async () => {
    const next = random(13);
    for (let round = 0; round < 12; round++) {
      const [wanted, left] = [WORDS[Math.floor(next() * 5)] as string, WORDS[5 + Math.floor(next() * 5)] as string];
      const plain = await ranking({ query: wanted });
      const excluding = await ranking({ query: `${wanted} -${left}` });
      assert.deepEqual(
        excluding.ids,
        plain.ids.filter((docId) => !holds(docId, left)),
        `${wanted} -${left}`,
      );
      assert.equal(excluding.total, excluding.ids.length);
    }
    const faceted = await context.app.inject({
      method: 'POST',
      url: '/query',
      headers: { 'x-api-key': key },
      payload: { query: 'river -stone', facets: ['year'], top_k: 1 },
    });
    const expected: Record<string, number> = {};
    for (const document of documents) {
      if (holds(document.docId, 'river') && !holds(document.docId, 'stone'))
        expected[String(document.metadata.year)] = (expected[String(document.metadata.year)] ?? 0) + 1;
    }
    const counted = json(faceted).resp.body.facets.year as Record<string, number>;
    assert.deepEqual(Object.fromEntries(Object.entries(counted).sort()), Object.fromEntries(Object.entries(expected).sort()));
    assert.deepEqual(await ranking({ query: 'river -unicorn' }), await ranking({ query: 'river' }), 'excluding a word no document holds leaves all');
    assert.deepEqual(
      await ranking({ query: 'well-known river' }),
      await ranking({ query: 'well known river' }),
      'a minus inside a word is plain text',
    );
  });

  it('does not mark an excluded word, and charges one credit whatever the syntax', async () => {
    const before = await context.balanceOf(key);
    const response = await context.app.inject({
      method: 'POST',
      url: '/query',
      headers: { 'x-api-key': key },
      payload: { query: 'river -stone', highlight: true, operator: 'and' },
    });
    assert.equal(response.statusCode, 200);
    assert.equal(await context.balanceOf(key), before - 1);
    for (const document of json(response).resp.body.hits.documents)
      assert.doesNotMatch(`${document.highlights.title} ${document.highlights.text}`, /<mark>stone/);
  });
});
