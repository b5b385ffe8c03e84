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

  it('synonyms set FILE.json and synonyms list: the rules searches apply, a bad file refused with nothing changed', async () => {
    const file = join(dir.path, 'synonyms.json');
    writeFileSync(file, JSON.stringify({ synonyms: [{ words: ['agreement', 'contract'] }, { from: 'breach', to: ['incident'] }] }));
    const set = await cli(env, 'synonyms', 'set', file);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /^2 rules set \(version 1\)/);
    assert.match((await cli(env, 'synonyms', 'list')).stdout, /agreement = contract\nbreach -> incident/);
    const found = JSON.parse((await cli(env, 'search', 'agreement', '--json')).stdout);
    assert.deepEqual(
      found.hits.documents.map((document: { doc_id: string }) => document.doc_id),
      ['contract-1'],
    );
    const bad = join(dir.path, 'bad.json');
    writeFileSync(bad, JSON.stringify({ synonyms: [{ words: ['alone'] }] }));
    const refused = await cli(env, 'synonyms', 'set', bad);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /synonyms\[0\].*Nothing was changed/);
    const listed = JSON.parse((await cli(env, 'synonyms', 'list', '--json')).stdout);
    assert.equal(listed.version, 1);
    assert.equal(listed.synonyms.length, 2);
  });
});
