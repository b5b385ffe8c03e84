import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertEnvelope, createTestApp, eventually, json, SAMPLE_DOCUMENTS, type TestContext } from '../../support/helper.js';

describe('GET /document', () => {
  let context: TestContext;
  before(async () => {
    context = await createTestApp();
  });
  after(async () => context.close());

  const fetchDocument = (key: string, docId?: string) =>
    context.app.inject({ url: '/document', headers: { 'x-api-key': key, ...(docId === undefined ? {} : { 'svc-doc-id': docId }) } });

  describe('happy', () => {
    it('returns the document with its metadata and charges one credit', async () => {
      const key = await context.createKey(3);
      const response = await fetchDocument(key, 'gdpr-17');
      assert.equal(response.statusCode, 200);
      const { docId, title, text, metadata } = SAMPLE_DOCUMENTS[0];
      assert.deepEqual(json(response), { status: 200, statusCode: 200, body: { doc_id: docId, title, text, ...metadata } });
      assert.equal(response.headers['x-credits-remaining'], '2');
      assert.equal(await context.balanceOf(key), 2);
    });
  });

  describe('errors', () => {
    it('answers 400 naming svc-doc-id when it is missing or blank, without charging', async () => {
      const key = await context.createKey(3);
      assertEnvelope(await fetchDocument(key), 400, /svc-doc-id/);
      assertEnvelope(await fetchDocument(key, '   '), 400, /svc-doc-id/);
      assert.equal(await context.balanceOf(key), 3);
    });

    it('answers 404 "not found" for an unknown id, charged, with x-credits-remaining', async () => {
      const key = await context.createKey(3);
      const response = await fetchDocument(key, 'no-such-document');
      assertEnvelope(response, 404, /not found/i);
      assert.equal(response.headers['x-credits-remaining'], '2');
      assert.equal(await context.balanceOf(key), 2);
    });

    it('answers 402 at zero balance before the record is read', async () => {
      const key = await context.createKey(1);
      assert.equal((await fetchDocument(key, 'gdpr-17')).statusCode, 200);
      const response = await fetchDocument(key, 'gdpr-17');
      assertEnvelope(response, 402);
      assert.ok(!response.body.includes('erasure'));
      assert.equal(response.headers['x-credits-remaining'], undefined);
    });

    it('checks the key format before the document header', async () => {
      assertEnvelope(await context.app.inject({ url: '/document' }), 400);
    });
  });

  describe('accounting', () => {
    it('records each charge with its endpoint and outcome status', async () => {
      const key = await context.createKey(5);
      await fetchDocument(key, 'gdpr-17');
      await fetchDocument(key, 'missing');
      const id = (await context.store.ledger.listKeys()).at(-1)!.id;
      await eventually(async () => {
        const charges = await context.store.ledger.listCharges(id);
        assert.deepEqual(
          charges.map((charge) => [charge.endpoint, charge.outcomeStatus]),
          [
            ['/document', 404],
            ['/document', 200],
          ],
        );
      });
    });
  });
});
