import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DocumentRecord, MetadataValue } from '../../../src/documents/document-store.js';
import { createTestApp, json, type TestContext } from '../../support/helper.js';
import { pagedRanking } from '../../support/paged-ranking.js';
import { random } from '../../support/random.js';

// Words that are their own stems, and one stopword, so that which documents hold a phrase is plain to see.
const WORDS = ['river', 'stone', 'glacier', 'ember', 'quarry', 'thistle', 'falcon', 'copper', 'lantern', 'harbour', 'the'];
const TAGS = ['alpha', 'beta', 'gamma', 'delta'];

function corpus(): DocumentRecord[] {
  const next = random(19);
  const pick = () => WORDS[Math.floor(next() ** 1.4 * WORDS.length)] as string;
  return Array.from({ length: 260 }, (_, index) => {
    const metadata: Record<string, MetadataValue> = {};
    if (index % 7 !== 0) metadata.year = 2018 + Math.floor(next() * 6);
    if (index % 5 !== 0) metadata.date = `2024-0${1 + Math.floor(next() * 9)}-1${Math.floor(next() * 10)}`;
    if (index % 3 !== 0) metadata.tags = Array.from({ length: 1 + Math.floor(next() * 3) }, () => TAGS[Math.floor(next() * TAGS.length)] as string);
    // A field of mixed types: numbers sort before strings.
    if (index % 4 === 1) metadata.code = index % 8 === 1 ? index : `c${index % 10}`;
    return {
      docId: `d${String(index).padStart(3, '0')}`,
      title: Array.from({ length: 1 + Math.floor(next() * 3) }, pick).join(' '),
      text: Array.from({ length: 3 + Math.floor(next() * 9) }, pick).join(' '),
      metadata,
    };
  });
}

describe('POST /query: phrases, object forms and sorts, against a reading of the documents', () => {
  const documents = corpus();
  const byId = new Map(documents.map((document) => [document.docId, document]));
  const tokens = (text: string) => text.split(' ');
  /** Whether the text holds the words at consecutive positions; null: any word there. */
  const holdsPhrase = (text: string, phrase: Array<string | null>) => {
    const words = tokens(text);
    return words.some((_, start) =>
      phrase.every((word, offset) => start + offset < words.length && (word === null || words[start + offset] === word)),
    );
  };
  const inTitleOrText = (document: DocumentRecord, phrase: Array<string | null>) =>
    holdsPhrase(document.title, phrase) || holdsPhrase(document.text, phrase);
  const holds = (document: DocumentRecord, word: string) => tokens(`${document.title} ${document.text}`).includes(word);
  const idsWhere = (test: (document: DocumentRecord) => boolean) =>
    documents
      .filter(test)
      .map((document) => document.docId)
      .sort();

  let context: TestContext;
  let key: string;
  before(async () => {
    context = await createTestApp({ documents });
    key = await context.createKey(100_000);
  });
  after(() => context.close());

  const post = (payload: Record<string, unknown>) => context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload });

  const ranking = (body: Record<string, unknown>, pageSize = 40) => pagedRanking(context, key, body, pageSize);
  const matched = async (body: Record<string, unknown>) => (await ranking(body)).ids.sort();

  it('phrases: words adjacent and in order, a stopword keeping its place, combined with words and exclusions', async () => {
    const cases: Array<[string, (document: DocumentRecord) => boolean]> = [
      ['"copper lantern"', (document) => inTitleOrText(document, ['copper', 'lantern'])],
      ['"lantern copper"', (document) => inTitleOrText(document, ['lantern', 'copper'])],
      ['"river stone falcon"', (document) => inTitleOrText(document, ['river', 'stone', 'falcon'])],
      ['"river the stone"', (document) => inTitleOrText(document, ['river', null, 'stone'])],
      ['harbour "copper lantern"', (document) => holds(document, 'harbour') || inTitleOrText(document, ['copper', 'lantern'])],
      ['"copper lantern" -falcon', (document) => inTitleOrText(document, ['copper', 'lantern']) && !holds(document, 'falcon')],
      ['river -"copper lantern"', (document) => holds(document, 'river') && !inTitleOrText(document, ['copper', 'lantern'])],
    ];
    for (const [query, test] of cases) {
      const expected = idsWhere(test);
      assert.ok(expected.length > 0 && expected.length < documents.length, `the corpus plants ${query}`);
      assert.deepEqual(await matched({ query }), expected, query);
    }
    const both = await matched({ query: 'harbour "copper lantern"', operator: 'and' });
    assert.deepEqual(
      both,
      idsWhere((document) => holds(document, 'harbour') && inTitleOrText(document, ['copper', 'lantern'])),
    );
    const marked = json(await post({ query: '"copper lantern"', highlight: true, top_k: 20 })).resp.body.hits.documents as Array<{
      highlights: { title: string; text: string };
    }>;
    for (const { highlights } of marked) {
      assert.match(`${highlights.title} ${highlights.text}`, /<mark>copper lantern<\/mark>/, 'a phrase is marked as one span');
      assert.doesNotMatch(`${highlights.title} ${highlights.text}`, /<mark>copper<\/mark>/, "a phrase's word alone is not marked");
    }
    const titles = await matched({ query: { match: { title: '"copper lantern"' } } });
    assert.deepEqual(
      titles,
      idsWhere((document) => holdsPhrase(document.title, ['copper', 'lantern'])),
    );
  });

  it('text of exclusions alone matches every other document, in doc_id order', async () => {
    const result = await ranking({ query: '-river -"copper lantern"' });
    assert.deepEqual(
      result.ids,
      idsWhere((document) => !holds(document, 'river') && !inTitleOrText(document, ['copper', 'lantern'])),
    );
  });

  it('unbalanced quotes, lone minus signs and odd text are plain text, never an error', async () => {
    for (const query of ['"copper lantern', 'copper" lantern', '- river', '""', '-"', 'river -', '"""', '-"" stone']) {
      const response = await post({ query, top_k: 5 });
      assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
    }
    assert.deepEqual(await matched({ query: '"copper lantern' }), await matched({ query: 'copper lantern' }));
  });

  it('every object form matches what a reading of the documents says', async () => {
    const year = (document: DocumentRecord) => document.metadata.year as number | undefined;
    const tags = (document: DocumentRecord) => (document.metadata.tags as string[] | undefined) ?? [];
    const cases: Array<[Record<string, unknown>, (document: DocumentRecord) => boolean]> = [
      [{ match: { text: { query: 'river stone', operator: 'and' } } }, (d) => tokens(d.text).includes('river') && tokens(d.text).includes('stone')],
      [{ match_phrase: { text: 'copper lantern' } }, (d) => holdsPhrase(d.text, ['copper', 'lantern'])],
      [{ multi_match: { query: 'copper lantern', fields: ['title^3', 'text'], type: 'phrase' } }, (d) => inTitleOrText(d, ['copper', 'lantern'])],
      [{ multi_match: { query: 'falcon', fields: ['title'] } }, (d) => tokens(d.title).includes('falcon')],
      [{ multi_match: { query: 'falcon ember', type: 'most_fields' } }, (d) => holds(d, 'falcon') || holds(d, 'ember')],
      [{ term: { year: 2020 } }, (d) => year(d) === 2020],
      [{ terms: { tags: ['alpha', 'delta'] } }, (d) => tags(d).includes('alpha') || tags(d).includes('delta')],
      [{ range: { year: { gte: 2019, lt: 2022 } } }, (d) => year(d) !== undefined && (year(d) as number) >= 2019 && (year(d) as number) < 2022],
      [
        { range: { date: { gt: '2024-03-15', lte: '2024-07-19' } } },
        (d) => typeof d.metadata.date === 'string' && d.metadata.date > '2024-03-15' && d.metadata.date <= '2024-07-19',
      ],
      [{ exists: { field: 'year' } }, (d) => year(d) !== undefined],
      [{ ids: { values: ['d001', 'd017', 'd250', 'nope'] } }, (d) => ['d001', 'd017', 'd250'].includes(d.docId)],
      [{ match_all: {} }, () => true],
      [
        {
          bool: {
            must: [{ match: 'river' }],
            filter: [{ range: { year: { gte: 2020 } } }],
            must_not: [{ term: { tags: 'beta' } }],
          },
        },
        (d) => holds(d, 'river') && (year(d) ?? 0) >= 2020 && !tags(d).includes('beta'),
      ],
      [
        { bool: { should: [{ match: 'falcon' }, { match: 'ember' }, { match: 'quarry' }], minimum_should_match: 2 } },
        (d) => ['falcon', 'ember', 'quarry'].filter((word) => holds(d, word)).length >= 2,
      ],
      [{ bool: { must_not: [{ exists: { field: 'tags' } }] } }, (d) => tags(d).length === 0],
      [
        { bool: { should: [{ match_phrase: { text: 'copper lantern' } }, { bool: { must: [{ term: { year: 2018 } }, { match: 'thistle' }] } }] } },
        (d) => holdsPhrase(d.text, ['copper', 'lantern']) || (year(d) === 2018 && holds(d, 'thistle')),
      ],
    ];
    for (const [query, test] of cases) {
      const expected = idsWhere(test);
      assert.ok(expected.length > 0, `the corpus has matches for ${JSON.stringify(query)}`);
      assert.deepEqual(await matched({ query }), expected, JSON.stringify(query));
    }
    const filtered = await matched({ query: { match: 'river' }, filters: { year: { gte: 2021 } } });
    assert.deepEqual(
      filtered,
      idsWhere((d) => holds(d, 'river') && (year(d) ?? 0) >= 2021),
    );
  });

  it('must and should add up: a document matching both clauses ranks above one matching the must alone', async () => {
    const { ids } = await ranking({ query: { bool: { must: [{ match: 'river' }], should: [{ match: 'copper' }] } } });
    assert.deepEqual(
      [...ids].sort(),
      idsWhere((d) => holds(d, 'river')),
      'should is optional beside must',
    );
    const withCopper = ids.map((docId) => holds(byId.get(docId) as DocumentRecord, 'copper'));
    assert.ok(withCopper.includes(true) && withCopper.includes(false), 'both kinds of match occur');
    assert.ok(withCopper.indexOf(false) > withCopper.filter(Boolean).length / 2, 'documents with the should clause come first, mostly');
    const confidenceOf = async (query: unknown) => json(await post({ query, top_k: 1 })).resp.body.hits.documents[0].confidence as number;
    const plainBool = await confidenceOf({ bool: { must: [{ match: 'river' }] } });
    assert.ok((await confidenceOf({ bool: { must: [{ match: 'river' }], boost: 2 } })) > plainBool, "a bool's boost scales its score");
    assert.equal(await confidenceOf({ match: { text: { query: 'river', boost: 0 } } }), 0, 'a boost of 0 scores nothing');
    const filterOnly = await ranking({ query: { bool: { filter: [{ term: { year: 2020 } }] } } });
    assert.deepEqual(
      filterOnly.ids,
      idsWhere((d) => d.metadata.year === 2020),
      'a filter scores nothing: doc_id order',
    );
  });

  it('sorts every match by fields, title and doc_id, ties by score then doc_id, pages neither overlapping nor skipping', async () => {
    const byScore = (await ranking({ query: 'river' })).ids;
    const value = (docId: string, field: string, descending: boolean) => {
      const raw = (byId.get(docId) as DocumentRecord).metadata[field];
      const values = (Array.isArray(raw) ? raw : [raw]).filter((item) => typeof item === 'number' || typeof item === 'string') as Array<
        number | string
      >;
      if (values.length === 0) return undefined;
      return [...values].sort(compare)[descending ? values.length - 1 : 0];
    };
    function compare(a: number | string, b: number | string): number {
      if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
      return a < b ? -1 : a > b ? 1 : 0;
    }
    const sortedBy = (field: string, descending: boolean) =>
      [...byScore].sort((x, y) => {
        const [a, b] = [value(x, field, descending), value(y, field, descending)];
        if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
        return descending ? compare(b, a) : compare(a, b);
      });
    for (const [field, descending] of [
      ['year', true],
      ['year', false],
      ['date', false],
      ['tags', false],
      ['tags', true],
      ['code', false],
      ['code', true],
    ] as const) {
      const sorted = await ranking({ query: 'river', sort: [`${field}:${descending ? 'desc' : 'asc'}`] }, 17);
      assert.deepEqual(sorted.ids, sortedBy(field, descending), `${field} ${descending ? 'desc' : 'asc'}`);
    }
    const twoKeys = await ranking({ query: 'river', sort: ['year:desc', 'doc_id:desc'] }, 23);
    const expected = [...byScore].sort((x, y) => {
      const [a, b] = [value(x, 'year', true), value(y, 'year', true)];
      if (a !== b) return a === undefined ? 1 : b === undefined ? -1 : compare(b, a);
      return x < y ? 1 : -1;
    });
    assert.deepEqual(twoKeys.ids, expected);
    const titles = await ranking({ query: { range: { year: { gte: 2022 } } }, sort: ['title'] });
    const expectedTitles = idsWhere((d) => (d.metadata.year as number) >= 2022).sort((x, y) => {
      const [a, b] = [(byId.get(x) as DocumentRecord).title, (byId.get(y) as DocumentRecord).title];
      return a < b ? -1 : a > b ? 1 : x < y ? -1 : 1;
    });
    assert.deepEqual(titles.ids, expectedTitles);
    assert.deepEqual((await ranking({ query: 'river', sort: ['_score'] })).ids, byScore, '_score is the default order');
    const filteredSort = await ranking({ query: 'river -stone', filters: { year: { gte: 2020 } }, sort: ['year:desc'] }, 9);
    const kept = new Set(idsWhere((d) => holds(d, 'river') && !holds(d, 'stone') && (d.metadata.year as number) >= 2020));
    assert.deepEqual(
      filteredSort.ids,
      sortedBy('year', true).filter((docId) => kept.has(docId)),
      'a sort with filters and an exclusion',
    );
    const faceted = json(await post({ query: 'river', sort: ['year:desc'], facets: ['year'], top_k: 3 })).resp.body;
    const plain = json(await post({ query: 'river', facets: ['year'], top_k: 3 })).resp.body;
    assert.deepEqual([faceted.hits.total, faceted.facets], [plain.hits.total, plain.facets], 'a sort leaves total and facets as they are');
  });

  it('refuses an unknown clause or option with a 400 naming it, and charges nothing', async () => {
    for (const name of ['a\\b', 'a.b', '$', 'a[0]', ':desc', 'x'.repeat(3000)]) {
      const odd = await post({ query: 'river', sort: [name], top_k: 3 });
      assert.equal(odd.statusCode, 200, `a sort by ${name.slice(0, 10)}: a field no document has, not an error`);
    }
    const before = await context.balanceOf(key);
    const refused: Array<[unknown, RegExp]> = [
      [{ fuzzy_match: { text: 'river' } }, /unknown clause "fuzzy_match"/],
      [{ match: { text: { query: 'river', prefix_length: 2 } } }, /unknown option "prefix_length"/],
      [{ bool: { must: [{ match: 'river' }], shoud: [] } }, /unknown option "shoud"/],
      [{ bool: { must: [{ nope: {} }] } }, /query\.bool\.must\[0\] holds an unknown clause "nope"/],
      [{ range: { year: { from: 2000 } } }, /unknown option "from"/],
      [{ term: { title: 'river' } }, /metadata fields/],
      [{ match: 'river', term: { year: 2020 } }, /exactly one clause/],
      [{ bool: { should: Array.from({ length: 32 }, () => ({ match: 'river' })) } }, /more than 32 clauses/],
    ];
    for (const [query, message] of refused) {
      const response = await post({ query });
      assert.equal(response.statusCode, 400, JSON.stringify(query));
      assert.match(json(response).message, message);
    }
    const badSort = await post({ query: 'river', sort: ['a', 'b', 'c', 'd'] });
    assert.equal(badSort.statusCode, 400);
    assert.equal(await context.balanceOf(key), before, 'nothing was charged');
    await post({ query: { bool: { must: [{ match: 'river' }] } } });
    assert.equal(await context.balanceOf(key), before - 1, 'a query object costs one credit');
  });
});
