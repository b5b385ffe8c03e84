import assert from 'node:assert/strict';
import { json, type TestContext } from './helper.js';

/**
 * Every match of a /query body, in its order, read page by page; asserts that the pages neither
 * overlap nor skip a document (their union is `total` documents).
 */
export async function pagedRanking(
  context: TestContext,
  key: string,
  body: Record<string, unknown>,
  pageSize = 100,
): Promise<{ total: number; ids: string[] }> {
  const ids: string[] = [];
  let total = 0;
  for (let offset = 0; ; offset += pageSize) {
    const response = await context.app.inject({
      method: 'POST',
      url: '/query',
      headers: { 'x-api-key': key },
      payload: { ...body, top_k: pageSize, offset },
    });
    assert.equal(response.statusCode, 200, response.body);
    const hits = json(response).resp.body.hits;
    total = hits.total;
    ids.push(...hits.documents.map((document: { doc_id: string }) => document.doc_id));
    if (hits.documents.length < pageSize) break;
  }
  assert.equal(new Set(ids).size, ids.length, `pages overlap: ${JSON.stringify(body)}`);
  assert.equal(ids.length, total, `pages skip a document, or total is wrong: ${JSON.stringify(body)}`);
  return { total, ids };
}
