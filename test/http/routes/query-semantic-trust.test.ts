import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../../src/app.js';
import { hashApiKey } from '../../../src/billing/keys.js';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { startStandInEmbedder } from '../../../src/embeddings/stand-in/stand-in-embedder.js';
import { FaultProxy } from '../../support/fault-proxy.js';
import { assertEnvelope, createTestApp, DEFAULT_SETTINGS, json, standInEmbeddings } from '../../support/helper.js';

const DOCUMENTS: DocumentRecord[] = [
  { docId: 'auto-recall', title: 'Automobile recall', text: 'The maker recalls vehicles with faulty brakes.', metadata: {} },
  { docId: 'car-park', title: 'Car park prices', text: 'Parking near the station costs more.', metadata: {} },
  { docId: 'dismissal', title: 'Employee dismissal', text: 'Workers fired without notice may claim.', metadata: {} },
];
const DIMENSIONS = 64;
const MODES = ['semantic', 'hybrid'] as const;

/** A service whose embedding model sits behind a proxy that counts every call reaching it. */
async function embeddedService(overrides: Parameters<typeof standInEmbeddings>[2] = {}, options: { rateLimitPerSecond?: number } = {}) {
  const standIn = await startStandInEmbedder({ dimensions: DIMENSIONS });
  const proxy = await new FaultProxy(standIn.url.replace('/v1/embeddings', '')).start();
  const context = await createTestApp({
    documents: DOCUMENTS,
    embeddings: standInEmbeddings(`${proxy.url}/v1/embeddings`, DIMENSIONS, overrides),
    settings: { prices: { '/query:semantic': 3 } },
    ...options,
  });
  const modelCalls = () => proxy.seen.length;
  const query = (apiKey: string, payload: object) => context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': apiKey }, payload });
  const keyId = async (apiKey: string) => (await context.store.ledger.findKeyByHash(hashApiKey(apiKey)))!.id;
  return {
    context,
    proxy,
    modelCalls,
    query,
    keyId,
    close: async () => {
      await context.close();
      await proxy.stop();
      await standIn.close();
    },
  };
}

describe('POST /query semantic and hybrid: nothing reaches the embedding model for a request that would not pay', () => {
  let service: Awaited<ReturnType<typeof embeddedService>>;
  before(async () => {
    service = await embeddedService();
  });
  after(() => service.close());

  it('random keys are 401 and never call the model', async () => {
    const calls = service.modelCalls();
    for (const mode of MODES) {
      for (let i = 0; i < 5; i++) {
        assertEnvelope(await service.query(randomBytes(32).toString('hex'), { query: `unseen prompt ${mode} ${i}`, mode }), 401);
      }
    }
    assert.equal(service.modelCalls(), calls);
  });

  it('revoked, disabled and expired keys are 403 and never call the model', async () => {
    const { context } = service;
    const revoked = await context.createKey(10);
    await context.store.ledger.setKeyStatus(await service.keyId(revoked), 'revoked');
    const disabled = await context.createKey(10);
    await context.store.ledger.setKeyStatus(await service.keyId(disabled), 'disabled');
    const expired = await context.createKey(10);
    await context.store.ledger.updateKeySettings(await service.keyId(expired), { expiresAt: new Date(Date.now() - 1000).toISOString() });
    const calls = service.modelCalls();
    for (const mode of MODES) {
      assertEnvelope(await service.query(revoked, { query: `revoked ${mode}`, mode }), 403, /revoked/);
      assertEnvelope(await service.query(disabled, { query: `disabled ${mode}`, mode }), 403, /disabled/);
      assertEnvelope(await service.query(expired, { query: `expired ${mode}`, mode }), 403, /expired/);
    }
    assert.equal(service.modelCalls(), calls);
  });

  it("a balance short of the mode's price is 402 and never calls the model", async () => {
    const broke = await service.context.createKey(0);
    const short = await service.context.createKey(2);
    const calls = service.modelCalls();
    assertEnvelope(await service.query(broke, { query: 'broke hybrid', mode: 'hybrid' }), 402);
    assertEnvelope(await service.query(broke, { query: 'broke semantic', mode: 'semantic' }), 402);
    assertEnvelope(await service.query(short, { query: 'short semantic', mode: 'semantic' }), 402, /costs 3 credits/);
    assert.equal(service.modelCalls(), calls);
    assert.equal(await service.context.balanceOf(short), 2);
    const hybrid = await service.query(short, { query: 'car', mode: 'hybrid' });
    assert.equal(hybrid.statusCode, 200, 'hybrid costs 1: the key can pay it');
    assert.equal(service.modelCalls(), calls + 1);
  });

  it('a reached spend cap is 429 and never calls the model', async () => {
    const { context } = service;
    const capped = await context.createKey(100);
    await context.store.ledger.updateKeySettings(await service.keyId(capped), { spendCaps: [{ credits: 4, interval: 'day' }] });
    assert.equal((await service.query(capped, { query: 'car', mode: 'semantic' })).statusCode, 200);
    const calls = service.modelCalls();
    const refused = assertEnvelope(await service.query(capped, { query: 'a cap passing prompt', mode: 'semantic' }), 429, /cap of 4 credits/);
    assert.ok(refused);
    assert.equal(service.modelCalls(), calls);
    assert.equal(await context.balanceOf(capped), 97);
  });

  it('a prompt is cut to EMBEDDINGS_MAX_CHARS before it reaches the model', async () => {
    const key = await service.context.createKey(10);
    const long = `car ${'x'.repeat(50_000)}`;
    const response = await service.query(key, { query: long, mode: 'semantic' });
    assert.equal(response.statusCode, 200, response.body);
    const sent = JSON.parse(service.proxy.seen.at(-1)!.body) as { input: string[] };
    assert.equal(sent.input[0].length, 2000);
  });
});

describe('POST /query semantic and hybrid: the rate limit refuses before the model', () => {
  it('a key over its rate is 429 without a call', async () => {
    const service = await embeddedService({}, { rateLimitPerSecond: 1 });
    try {
      const key = await service.context.createKey(10);
      const calls = service.modelCalls();
      const statuses = [];
      for (let attempt = 0; attempt < 5; attempt++) {
        statuses.push((await service.query(key, { query: `prompt number ${attempt} over the rate`, mode: 'semantic' })).statusCode);
      }
      assert.ok(statuses.includes(429), String(statuses));
      assert.equal(service.modelCalls(), calls + statuses.filter((status) => status === 200).length, 'only the served prompts reached the model');
    } finally {
      await service.close();
    }
  });
});

describe('POST /query semantic and hybrid: calls to the model are bounded', () => {
  it('past EMBEDDINGS_CONCURRENCY, semantic is a 503 and hybrid answers lexically, neither charged', async () => {
    const service = await embeddedService({ concurrency: 2, timeoutMs: 3000, retries: 0 });
    try {
      const key = await service.context.createKey(100);
      const calls = service.modelCalls();
      service.proxy.faults.push({ kind: 'hang' }, { kind: 'hang' });
      const held = [service.query(key, { query: 'held one', mode: 'semantic' }), service.query(key, { query: 'held two', mode: 'semantic' })];
      // Both held prompts are with the model before the third is sent.
      while (service.modelCalls() < calls + 2) await new Promise((resolve) => setTimeout(resolve, 10));
      const busy = await service.query(key, { query: 'a third prompt', mode: 'semantic' });
      assertEnvelope(busy, 503, /EMBEDDINGS_CONCURRENCY/);
      const hybrid = await service.query(key, { query: 'car', mode: 'hybrid' });
      assert.equal(hybrid.statusCode, 200);
      assert.equal(hybrid.headers['x-search-fallback'], 'lexical');
      assert.equal(hybrid.headers['x-credits-charged'], '0');
      assert.deepEqual(
        json(hybrid).resp.body.hits.documents.map((document: { doc_id: string }) => document.doc_id),
        ['car-park'],
      );
      for (const response of await Promise.all(held)) assertEnvelope(response, 503, /embedding model did not answer/);
      assert.equal(service.modelCalls(), calls + 2);
      assert.equal(await service.context.balanceOf(key), 100);
    } finally {
      await service.close();
    }
  });

  it('after repeated failures the breaker opens: the model is not called, semantic is a 503 and hybrid lexical, uncharged', async () => {
    const service = await embeddedService({ retries: 0, breakerFailures: 2, breakerCooldownMs: 60_000 });
    try {
      const key = await service.context.createKey(100);
      service.proxy.faults.push({ kind: 'answer', status: 500, body: '' }, { kind: 'answer', status: 500, body: '' });
      assertEnvelope(await service.query(key, { query: 'failing one', mode: 'semantic' }), 503);
      assertEnvelope(await service.query(key, { query: 'failing two', mode: 'semantic' }), 503);
      const calls = service.modelCalls();
      assertEnvelope(await service.query(key, { query: 'while open', mode: 'semantic' }), 503, /failed repeatedly/);
      const hybrid = await service.query(key, { query: 'car while open', mode: 'hybrid' });
      assert.equal(hybrid.headers['x-search-fallback'], 'lexical');
      assert.equal(service.modelCalls(), calls);
      assert.equal(await service.context.balanceOf(key), 100);
    } finally {
      await service.close();
    }
  });
});

describe('POST /query semantic and hybrid: a vector the model got wrong is a model failure', () => {
  const answering = (values: string) => ({
    kind: 'answer' as const,
    status: 200,
    body: `{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [${values}]}], "model": "stand-in"}`,
  });
  const BAD = { zeros: new Array(DIMENSIONS).fill('0').join(','), infinite: ['1e400', ...new Array(DIMENSIONS - 1).fill('0.1')].join(',') };

  it('all zeros or Infinity: semantic is a 503 and hybrid answers lexically, both uncharged', async () => {
    const service = await embeddedService({ retries: 0 });
    try {
      const key = await service.context.createKey(20);
      for (const [name, values] of Object.entries(BAD)) {
        service.proxy.faults.push(answering(values));
        assertEnvelope(await service.query(key, { query: `semantic ${name}`, mode: 'semantic' }), 503);
        service.proxy.faults.push(answering(values));
        const hybrid = await service.query(key, { query: `car hybrid ${name}`, mode: 'hybrid' });
        assert.equal(hybrid.statusCode, 200);
        assert.equal(hybrid.headers['x-search-fallback'], 'lexical', name);
      }
      assert.equal(await service.context.balanceOf(key), 20);
    } finally {
      await service.close();
    }
  });

  it('an ingest whose vector is all zeros is refused whole, naming the document', async () => {
    const service = await embeddedService({ retries: 0 });
    try {
      const before = await service.context.store.documents.countDocuments();
      service.proxy.faults.push({
        kind: 'answer',
        status: 200,
        body: JSON.stringify({
          object: 'list',
          data: [
            { object: 'embedding', index: 0, embedding: new Array(DIMENSIONS).fill(0.125) },
            { object: 'embedding', index: 1, embedding: new Array(DIMENSIONS).fill(0) },
          ],
        }),
      });
      const documents = [
        { docId: 'lorry-one', title: 'Lorry', text: 'A lorry fleet.', metadata: {} },
        { docId: 'lorry-two', title: 'Lorry two', text: 'Another lorry.', metadata: {} },
      ];
      await assert.rejects(
        service.context.store.documents.ingestDocuments(
          (async function* () {
            yield* documents;
          })(),
        ),
        /all zeros.*document "lorry-two"/,
      );
      assert.equal(await service.context.store.documents.countDocuments(), before);
    } finally {
      await service.close();
    }
  });
});

describe('POST /query semantic and hybrid: expected refusals in the log', () => {
  it('logs a refusal once, at warn, with its cause and no stack', async () => {
    const service = await embeddedService({ retries: 0 });
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const logged = await buildApp(service.context.services, { settings: DEFAULT_SETTINGS, logger: { level: 'warn', stream } });
    try {
      const key = await service.context.createKey(10);
      service.proxy.faults.push({ kind: 'answer', status: 500, body: '' }, { kind: 'answer', status: 500, body: '' });
      const semantic = await logged.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key },
        payload: { query: 'logged one', mode: 'semantic' },
      });
      assert.equal(semantic.statusCode, 503);
      const hybrid = await logged.inject({
        method: 'POST',
        url: '/query',
        headers: { 'x-api-key': key },
        payload: { query: 'car logged', mode: 'hybrid' },
      });
      assert.equal(hybrid.headers['x-search-fallback'], 'lexical');
      const byRequest = (response: { headers: Record<string, unknown> }) => lines.filter((line) => line.reqId === response.headers['x-request-id']);
      for (const response of [semantic, hybrid]) {
        const own = byRequest(response);
        assert.equal(own.length, 1, JSON.stringify(own));
        assert.equal(own[0]?.level, 40, 'warn');
        assert.match(String(own[0]?.cause), /answered 500/);
        assert.ok(!JSON.stringify(own[0]).includes('"stack"'), 'no stack');
      }
    } finally {
      await logged.close();
      await service.close();
    }
  });
});
