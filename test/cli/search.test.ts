import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../support/cli-helper.js';
import { tempDir } from '../support/helper.js';

describe('metered-search search', () => {
  const dir = tempDir();
  const env = { DATA_DIR: join(dir.path, 'data'), SEED_DEMO: 'false', FACE_WORKERS: '0' };
  before(async () => {
    const file = join(dir.path, 'corpus.jsonl');
    const documents = [
      { doc_id: 'breach-1', title: 'Notifying a data breach', text: 'A controller notifies breaches within 72 hours.' },
      { doc_id: 'contract-1', title: 'Contract law', text: 'Offer and acceptance.' },
    ];
    writeFileSync(file, documents.map((document) => JSON.stringify(document)).join('\n'));
    assert.equal((await cli(env, 'ingest', file)).code, 0);
  });
  after(() => dir.remove());

  it('ranks as /query does and marks the matches, in a table or as JSON', async () => {
    const shown = await cli(env, 'search', 'breach');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^1 matching, the best 1:/);
    assert.match(shown.stdout, /breach-1 .*Notifying a data \[breach\]/);
    assert.match(shown.stdout, /breach-1: A controller notifies \[breaches\] within 72 hours\./);
    const json = JSON.parse((await cli(env, 'search', 'breach', '--json')).stdout);
    assert.equal(json.hits.total, 1);
    assert.equal(json.hits.documents[0].highlights.title, 'Notifying a data <mark>breach</mark>');
    assert.equal((await cli(env, 'search', 'unicorn')).stdout.trim(), 'No document matches.');
  });

  it('refuses a bad --top-k or no text, saying what to give', async () => {
    const badTopK = await cli(env, 'search', 'breach', '--top-k', '0');
    assert.equal(badTopK.code, 1);
    assert.match(badTopK.stderr, /--top-k/);
    const empty = await cli(env, 'search', '  ');
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /text to search/);
  });
});
