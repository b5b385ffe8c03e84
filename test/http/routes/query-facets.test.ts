import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';
import { random } from '../../support/random.js';

// Words that are their own stems and no stopwords, so which documents hold a word is plain to see.
const WORDS = ['river', 'stone', 'glacier', 'ember', 'quarry', 'thistle', 'falcon', 'copper'];
const REGIONS = ['north', 'south', 'east', 'west', 'Centre'];
const TAGS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];

/** 400 documents with skewed metadata (one in ten without a region, tags as lists), and 30 identical ones, tied in any ranking. */
function corpus(): DocumentRecord[] {
  const next = random(42);
  const pick = <T>(list: T[]) => list[Math.floor(next() ** 2 * list.length)];
  const documents: DocumentRecord[] = Array.from({ length: 400 }, (_, index) => {
    const tags = [...new Set(Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(TAGS)))];
    return {
      docId: `d${String(index).padStart(3, '0')}`,
      title: Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(WORDS)).join(' '),
      text: `${Array.from({ length: 3 + Math.floor(next() * 12) }, () => pick(WORDS)).join(' ')}${index % 5 === 0 ? ' orchard' : ''}`,
      metadata: { ...(index % 10 === 0 ? {} : { region: pick(REGIONS) }), tags, year: 2020 + (index % 3) },
    };
  });
  for (let index = 0; index < 30; index++) {
    documents.push({ docId: `tie-${index}`, title: 'lantern', text: 'lantern harbour', metadata: { region: 'north', tags: ['alpha'], year: 2020 } });
  }
  return documents;
}

const words = (document: DocumentRecord) => `${document.title} ${document.text}`.split(' ');

/** Counts computed from the documents themselves: each value of the field among `matches`, most first, ties by value. */
function expectedFacet(matches: DocumentRecord[], field: string, limit = 100): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const document of matches) {
    const value = document.metadata?.[field];
    for (const element of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      counts.set(String(element), (counts.get(String(element)) ?? 0) + 1);
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, limit);
}

describe('POST /query facets and pages', () => {
  const documents = corpus();
  let context: TestContext;
  let key: string;
  before(async () => {
    context = await createTestApp({ documents });
    key = await context.createKey(10_000);
  });
  after(async () => context.close());

  const query = (payload: object) => context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload });
  const body = async (payload: object) => {
    const response = await query(payload);
    assert.equal(response.statusCode, 200, response.body);
    return json(response).resp.body;
  };

  it('counts every match, not only the page, each element of a list counted, most common first, ties by value', async () => {
    const matches = documents.filter((document) => words(document).includes('river'));
    const answer = await body({ query: 'river', top_k: 3, facets: ['region', 'tags', 'nothing'], facet_limit: 100 });
    assert.equal(answer.hits.total, matches.length);
    assert.equal(answer.hits.documents.length, 3);
    for (const field of ['region', 'tags']) {
      assert.deepEqual(Object.entries(answer.facets[field]), expectedFacet(matches, field), `${field}: counts and their order`);
    }
    assert.deepEqual(answer.facets.nothing, {}, 'a field no document has');
  });

  it('counts what filters and match clauses select, and keeps the facet_limit most common values', async () => {
    const inTitle = documents.filter((document) => document.title.split(' ').includes('glacier') && document.metadata?.year === 2021);
    const filtered = await body({ query: { match: { title: 'glacier' } }, filters: { year: 2021 }, facets: ['region', 'tags'], facet_limit: 2 });
    assert.equal(filtered.hits.total, inTitle.length);
    assert.deepEqual(Object.entries(filtered.facets.region), expectedFacet(inTitle, 'region', 2));
    assert.deepEqual(Object.entries(filtered.facets.tags), expectedFacet(inTitle, 'tags', 2));
    const anyOf = documents.filter((document) => words(document).includes('ember') && ['south', 'east'].includes(String(document.metadata?.region)));
    const listed = await body({ query: 'ember', filters: { region: ['south', 'east'] }, facets: ['region'] });
    assert.deepEqual(Object.entries(listed.facets.region), expectedFacet(anyOf, 'region'));
    const none = await body({ query: 'zeppelin', facets: ['region'] });
    assert.deepEqual(none, { hits: { total: 0, documents: [] }, facets: { region: {} } });
  });

  it('pages through every match of a common word without overlap or gap, ties in doc_id order, as one large page has them', async () => {
    // A word in one document of five (80 matches, scored by their lengths), and the tied documents' word.
    for (const word of ['orchard', 'lantern']) {
      const whole = await body({ query: word, top_k: 100 });
      assert.ok(whole.hits.total <= 100 && whole.hits.total > 20, `${word}: ${whole.hits.total} matches fit one large page`);
      const paged: string[] = [];
      for (let offset = 0; offset < whole.hits.total; offset += 7) {
        const page = await body({ query: word, top_k: 7, offset });
        assert.equal(page.hits.total, whole.hits.total, 'total is unchanged by paging');
        paged.push(...page.hits.documents.map((document: { doc_id: string }) => document.doc_id));
      }
      assert.deepEqual(
        paged,
        whole.hits.documents.map((document: { doc_id: string }) => document.doc_id),
        word,
      );
    }
    const ties = (await body({ query: 'lantern', top_k: 30 })).hits.documents.map((document: { doc_id: string }) => document.doc_id);
    assert.deepEqual(ties, [...ties].sort(), 'equal scores come in doc_id order');
    const past = await body({ query: 'lantern', top_k: 5, offset: 10_000 });
    assert.deepEqual(past.hits, { total: 30, documents: [] });
  });

  it('refuses bad facets, facet_limit and offset with a 400 naming the field, and charges nothing', async () => {
    const before = await context.balanceOf(key);
    const cases: Array<[object, RegExp]> = [
      [{ query: 'river', facets: TAGS.concat(REGIONS) }, /facets/],
      [{ query: 'river', facets: [3] }, /facets/],
      [{ query: 'river', facets: 'region' }, /facets/],
      [{ query: 'river', facets: [''] }, /facets/],
      [{ query: 'river', facets: ['region'], facet_limit: 0 }, /facet_limit/],
      [{ query: 'river', facets: ['region'], facet_limit: 101 }, /facet_limit/],
      [{ query: 'river', offset: -1 }, /offset/],
      [{ query: 'river', offset: 10_001 }, /offset/],
      [{ query: 'river', offset: '5' }, /offset/],
      [{ query: 'river', offset: 1.5 }, /offset/],
    ];
    for (const [payload, message] of cases) assertEnvelope(await query(payload), 400, message);
    assert.equal(await context.balanceOf(key), before);
  });
});
