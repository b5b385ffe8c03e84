import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { cli } from '../support/cli-helper.js';
import { tempDir } from '../support/helper.js';

describe('operator changes reach a busy running service on its next request', () => {
  const dir = tempDir();
  const env = { DATA_DIR: dir.path };
  let server: RunningServer;
  const agent = new Agent({ connections: 16 });

  before(async () => {
    server = await startServer(
      loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1', SEED_DEMO: 'false', LOG_LEVEL: 'silent', RATE_LIMIT_PER_S: '0', FACE_WORKERS: '0' }),
    );
  });
  after(async () => {
    await server.close();
    await agent.close();
    dir.remove();
  });

  const balance = async (key: string) => {
    const response = await request(`${server.url}/credits`, { dispatcher: agent, headers: { 'x-api-key': key } });
    return { status: response.statusCode, body: (await response.body.json()) as { current_balance: number | null } };
  };

  it('sees every top-up, disable and enable made through another connection, while /credits is hammered', async () => {
    const created = JSON.parse((await cli(env, 'keys', 'create', '--credits', '1', '--json')).stdout) as { key: string; id: string };
    let hammering = true;
    const hammer = (async () => {
      while (hammering) await balance(created.key);
    })();
    try {
      let expected = 1;
      for (let round = 0; round < 25; round++) {
        assert.equal((await cli(env, 'keys', 'topup', created.id, '--credits', '3')).code, 0);
        expected += 3;
        assert.equal((await balance(created.key)).body.current_balance, expected, `round ${round}`);
        if (round % 5 === 0) {
          await cli(env, 'keys', 'disable', created.id);
          assert.equal((await balance(created.key)).status, 403);
          await cli(env, 'keys', 'enable', created.id);
          assert.equal((await balance(created.key)).status, 200);
        }
      }
    } finally {
      hammering = false;
      await hammer;
    }
  });

  it('serves a document ingested, re-ingested or added by another connection on the next request', async () => {
    const created = JSON.parse((await cli(env, 'keys', 'create', '--credits', '1000', '--json')).stdout) as { key: string };
    const fetchTitle = async (docId: string) => {
      const response = await request(`${server.url}/document`, {
        dispatcher: agent,
        headers: { 'x-api-key': created.key, 'svc-doc-id': docId },
      });
      const body = (await response.body.json()) as { status: number; body?: { title: string } };
      return body.status === 200 ? body.body!.title : body.status;
    };
    const file = join(dir.path, 'doc.jsonl');
    assert.equal(await fetchTitle('live-doc'), 404);
    for (let version = 1; version <= 10; version++) {
      writeFileSync(file, JSON.stringify({ doc_id: 'live-doc', title: `version ${version}`, text: 'changing' }));
      assert.equal((await cli(env, 'ingest', file)).code, 0);
      assert.equal(await fetchTitle('live-doc'), `version ${version}`);
      assert.equal(await fetchTitle('live-doc'), `version ${version}`, 'and again, from the cache');
    }
  });
});
