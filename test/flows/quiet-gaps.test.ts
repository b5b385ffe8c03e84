import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { spawnServer } from '../support/child-server.js';
import { cli } from '../support/cli-helper.js';
import { tempDir } from '../support/helper.js';

/** Longer than any settle window: no request reaches the service between a change and its check. */
const QUIET_MS = 2200;

for (const workers of [1, 2]) {
  describe(`operator changes reach an idle service (serve --workers ${workers}) however late the next request comes`, () => {
    const dir = tempDir();
    const env = { DATA_DIR: dir.path };
    const agent = new Agent({ connections: 8 });
    after(async () => {
      await agent.close();
      dir.remove();
    });

    const call = async (url: string, path: string, key: string, init: { docId?: string; body?: unknown; idempotencyKey?: string } = {}) => {
      const headers: Record<string, string> = { 'x-api-key': key };
      if (init.docId) headers['svc-doc-id'] = init.docId;
      if (init.idempotencyKey) headers['idempotency-key'] = init.idempotencyKey;
      if (init.body) headers['content-type'] = 'application/json';
      const response = await request(`${url}${path}`, {
        dispatcher: agent,
        method: init.body ? 'POST' : 'GET',
        headers,
        body: init.body ? JSON.stringify(init.body) : undefined,
      });
      return { status: response.statusCode, body: (await response.body.json()) as Record<string, any> };
    };
    const createKey = async (credits: number) =>
      JSON.parse((await cli(env, 'keys', 'create', '--credits', String(credits), '--json')).stdout) as { key: string; id: string };
    const ingest = async (name: string, documents: object[]) => {
      const file = join(dir.path, name);
      writeFileSync(file, documents.map((document) => JSON.stringify(document)).join('\n'));
      assert.equal((await cli(env, 'ingest', file)).code, 0);
    };

    it('top-up, revoke, disable, enable, set-rate, ingest and replacement are all seen after quiet gaps', async () => {
      const [empty, toRevoke, toDisable, toEnable, toLimit, searcher] = await Promise.all([0, 5, 5, 5, 50, 50].map(createKey));
      await ingest('first.jsonl', [{ doc_id: 'replaced', title: 'first version', text: 'kept apart' }]);
      assert.equal((await cli(env, 'keys', 'disable', toEnable.id)).code, 0);

      const server = await spawnServer(env, workers > 1 ? ['--workers', String(workers)] : []);
      try {
        // Every worker sees (and caches) the state before the changes.
        for (let round = 0; round < 4 * workers; round++) {
          assert.equal((await call(server.url, '/credits', empty.key)).status, 402);
          assert.equal((await call(server.url, '/credits', toRevoke.key)).status, 200);
          assert.equal((await call(server.url, '/credits', toDisable.key)).status, 200);
          assert.equal((await call(server.url, '/credits', toEnable.key)).status, 403);
          assert.equal((await call(server.url, '/document', searcher.key, { docId: 'replaced' })).body.body.title, 'first version');
          assert.equal((await call(server.url, '/query', searcher.key, { body: { query: 'axolotl' } })).body.resp.body.hits.total, 0);
        }
        await sleep(QUIET_MS);

        assert.equal((await cli(env, 'keys', 'topup', empty.id, '--credits', '10')).code, 0);
        assert.equal((await cli(env, 'keys', 'revoke', toRevoke.id)).code, 0);
        assert.equal((await cli(env, 'keys', 'disable', toDisable.id)).code, 0);
        assert.equal((await cli(env, 'keys', 'enable', toEnable.id)).code, 0);
        assert.equal((await cli(env, 'keys', 'set-rate', toLimit.id, '1')).code, 0);
        await ingest('second.jsonl', [
          { doc_id: 'replaced', title: 'second version', text: 'kept apart' },
          { doc_id: 'ax1', title: 'axolotl', text: 'axolotl' },
        ]);
        await sleep(QUIET_MS);

        for (let round = 0; round < 2 * workers; round++) {
          const topped = await call(server.url, '/credits', empty.key);
          assert.deepEqual([topped.status, topped.body.current_balance], [200, 10], 'top-up');
          const revoked = await call(server.url, '/credits', toRevoke.key);
          assert.deepEqual([revoked.status, revoked.body.current_balance], [403, null], 'revoke');
          assert.equal((await call(server.url, '/credits', toDisable.key)).status, 403, 'disable');
          assert.equal((await call(server.url, '/credits', toEnable.key)).status, 200, 'enable');
          const document = await call(server.url, '/document', searcher.key, { docId: 'replaced' });
          assert.equal(document.body.body.title, 'second version', 'replacement');
          const found = await call(server.url, '/query', searcher.key, { body: { query: 'axolotl' } });
          assert.deepEqual(
            found.body.resp.body.hits.documents.map((hit: { doc_id: string }) => hit.doc_id),
            ['ax1'],
            'ingest',
          );
        }
        const limited = await Promise.all([1, 2, 3].map(() => call(server.url, '/credits', toLimit.key)));
        assert.ok(
          limited.some((answer) => answer.status === 429),
          'set-rate',
        );
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    });

    it('gives no idempotent replay to a key revoked since its first answer', async () => {
      const caller = await createKey(5);
      const server = await spawnServer(env, workers > 1 ? ['--workers', String(workers)] : []);
      try {
        const first = await call(server.url, '/document', caller.key, { docId: 'replaced', idempotencyKey: 'replay-me' });
        assert.equal(first.status, 200);
        assert.equal((await call(server.url, '/document', caller.key, { docId: 'replaced', idempotencyKey: 'replay-me' })).status, 200);
        assert.equal((await cli(env, 'keys', 'revoke', caller.id)).code, 0);
        for (let round = 0; round < 2 * workers; round++) {
          const replay = await call(server.url, '/document', caller.key, { docId: 'replaced', idempotencyKey: 'replay-me' });
          assert.equal(replay.status, 403);
          assert.equal(replay.body.body, undefined, 'no stored answer given out');
        }
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    });
  });
}
