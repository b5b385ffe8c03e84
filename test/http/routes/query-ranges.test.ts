import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DocumentRecord, MetadataValue } from '../../../src/documents/document-store.js';
import { assertEnvelope, createTestApp, json, type TestContext } from '../../support/helper.js';
import { random } from '../../support/random.js';

const DAYS = ['2015-03-01', '2016-01-01', '2016-07-15T10:00:00Z', '2018-12-31', '2019-06-30', '2021-02-02'];

function corpus(): DocumentRecord[] {
  const next = random(17);
  return Array.from({ length: 200 }, (_, index) => {
    const metadata: Record<string, MetadataValue> = {};
    if (index % 7 !== 0) metadata.year = 2010 + Math.floor(next() * 14);
    if (index % 5 !== 0) metadata.decided = DAYS[Math.floor(next() * DAYS.length)] as string;
    if (index % 3 === 0) metadata.scores = [Math.floor(next() * 10), Math.floor(next() * 10)];
    if (index % 11 === 0) metadata.year = String(2010 + (index % 10)); // a string where others hold numbers
    metadata.court = ['EU', 'UK', 'US'][index % 3] as string;
    return { docId: `d${String(index).padStart(3, '0')}`, title: 'court ruling', text: `ruling number ${index}`, metadata };
  });
}

/** The brute-force reading: whether a metadata value lies within the range, by the stated rules. */
function within(value: MetadataValue | undefined, range: Record<string, number | string>): boolean {
  if (Array.isArray(value)) return value.some((element) => within(element, range));
  return Object.entries(range).every(([bound, limit]) => {
    if (typeof value !== typeof limit) return false;
    const order = value! < limit ? -1 : value! > limit ? 1 : 0;
    return { gt: order > 0, gte: order >= 0, lt: order < 0, lte: order <= 0 }[bound as 'gt'];
  });
}

describe('POST /query with range and not filters, against a reading of the documents', () => {
  const documents = corpus();
  let context: TestContext;
  let key: string;
  before(async () => {
    context = await createTestApp({ documents });
    key = await context.createKey(1000);
  });
  after(() => context.close());

  const matches = async (filters: Record<string, unknown>) => {
    const response = await context.app.inject({
      method: 'POST',
      url: '/query',
      headers: { 'x-api-key': key },
      payload: { query: 'ruling', top_k: 100, filters },
    });
    assert.equal(response.statusCode, 200, response.body);
    const { hits } = json(response).resp.body;
    const more =
      hits.total > 100
        ? json(
            await context.app.inject({
              method: 'POST',
              url: '/query',
              headers: { 'x-api-key': key },
              payload: { query: 'ruling', top_k: 100, offset: 100, filters },
            }),
          ).resp.body.hits.documents
        : [];
    return { total: hits.total as number, ids: [...hits.documents, ...more].map((document: { doc_id: string }) => document.doc_id).sort() };
  };
  const expected = (keep: (document: DocumentRecord) => boolean) =>
    documents
      .filter(keep)
      .map((document) => document.docId)
      .sort();

  it('numbers compare as numbers, strings by code point, other types do not match, arrays by any element', async () => {
    const ranges: Array<Record<string, number | string>> = [{ gte: 2016, lt: 2020 }, { gt: 2012 }, { lte: 2011 }, { gte: 2030 }, { gte: '2015' }];
    for (const range of ranges) {
      const found = await matches({ year: range });
      const want = expected((document) => within(document.metadata.year, range));
      assert.deepEqual(found.ids, want, JSON.stringify(range));
      assert.equal(found.total, want.length);
    }
    const dayRanges: Array<Record<string, string>> = [{ gte: '2016-01-01', lt: '2019' }, { gt: '2016-07-15' }, { lte: '2015-12-31' }];
    for (const range of dayRanges) {
      assert.deepEqual(
        (await matches({ decided: range })).ids,
        expected((document) => within(document.metadata.decided, range)),
        JSON.stringify(range),
      );
    }
    assert.deepEqual(
      (await matches({ scores: { gte: 8 } })).ids,
      expected((document) => within(document.metadata.scores, { gte: 8 })),
    );
  });

  it('not leaves out the values named, keeping documents that lack the field, and combines with the rest', async () => {
    assert.deepEqual(
      (await matches({ court: { not: 'EU' } })).ids,
      expected((document) => document.metadata.court !== 'EU'),
    );
    assert.deepEqual(
      (await matches({ court: { not: ['EU', 'UK'] } })).ids,
      expected((document) => document.metadata.court === 'US'),
    );
    assert.deepEqual(
      (await matches({ year: { not: 2015 } })).ids,
      expected((document) => document.metadata.year !== 2015),
      'lacking the field passes',
    );
    const combined = await matches({ year: { gte: 2014 }, court: { not: 'US' }, decided: '2018-12-31' });
    assert.deepEqual(
      combined.ids,
      expected(
        (document) => within(document.metadata.year, { gte: 2014 }) && document.metadata.court !== 'US' && document.metadata.decided === '2018-12-31',
      ),
    );
  });

  it('refuses a range or not that is not one, uncharged', async () => {
    const before = await context.balanceOf(key);
    for (const filters of [{ year: {} }, { year: { between: [1, 2] } }, { year: { gte: true } }, { court: { not: { nested: 1 } } }]) {
      const response = await context.app.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key },
        payload: { query: 'ruling', filters },
      });
      assertEnvelope(response, 400);
    }
    assert.equal(await context.balanceOf(key), before);
  });
});
