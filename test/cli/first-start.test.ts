import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { spawnServer } from '../support/child-server.js';
import { tempDir } from '../support/helper.js';

const DEMO_KEY = /Demo API key \(shown once, keep it\): ([0-9a-f]{64})/;

describe('serve on a fresh data folder', () => {
  for (const workers of ['1', '2']) {
    it(`loads the demo corpus and prints a demo key once, which works at once (--workers ${workers})`, async () => {
      const dir = tempDir();
      try {
        const first = await spawnServer({ DATA_DIR: dir.path, SEED_DEMO: 'true' }, ['--workers', workers]);
        const key = DEMO_KEY.exec(first.output())?.[1];
        assert.ok(key, `a demo key is printed:\n${first.output()}`);
        const credits = await request(`${first.url}/credits`, { headers: { 'x-api-key': key } });
        assert.equal(((await credits.body.json()) as { current_balance: number }).current_balance, 100);
        const query = await request(`${first.url}/query`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'personal data breach notification', top_k: 3 }),
        });
        const found = (await query.body.json()) as { resp: { body: { hits: { total: number; documents: unknown[] } } } };
        assert.equal(query.statusCode, 200);
        assert.equal(found.resp.body.hits.documents.length, 3, 'the demo corpus is searchable');
        first.child.kill('SIGTERM');
        assert.equal(await first.exited, 0, 'SIGTERM stops it with exit code 0');

        const second = await spawnServer({ DATA_DIR: dir.path, SEED_DEMO: 'true' }, ['--workers', workers]);
        second.child.kill('SIGTERM');
        assert.equal(await second.exited, 0);
        assert.doesNotMatch(second.output(), DEMO_KEY, 'no second demo key on a later start');
      } finally {
        dir.remove();
      }
    });
  }
});
