import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { cli, cliOn } from '../support/cli-helper.js';
import { tempDir } from '../support/helper.js';

describe('metered-search ingest', () => {
  const dir = tempDir();
  const env = { DATA_DIR: join(dir.path, 'data') };
  after(() => dir.remove());

  function file(name: string, content: string): string {
    const path = join(dir.path, name);
    writeFileSync(path, content);
    return path;
  }

  async function documentIn(docId: string) {
    const store = new SqliteStore(env.DATA_DIR);
    try {
      return { document: await store.documents.getDocument(docId), count: await store.documents.countDocuments() };
    } finally {
      await store.close();
    }
  }

  it('says that nothing was ingested from an empty file', async () => {
    const result = await cli(env, 'ingest', file('empty.jsonl', '\n\n'));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^Nothing was ingested: .*empty\.jsonl holds no documents\.\n$/);
  });

  it('loads JSONL with the id and text aliases; numbers become string ids; other fields are metadata', async () => {
    const path = file(
      'docs.jsonl',
      [
        JSON.stringify({ doc_id: 'a', title: 'Alpha', text: 'first', region: 'EU' }),
        JSON.stringify({ _id: 'b', title: 'Beta', body: 'second' }),
        '',
        JSON.stringify({ id: 42, text: 'third', tags: ['x', 'y'] }),
      ].join('\n'),
    );
    const result = await cli(env, 'ingest', path, '--json');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).documents, 3);
    assert.deepEqual((await documentIn('a')).document, { docId: 'a', title: 'Alpha', text: 'first', metadata: { region: 'EU' } });
    assert.deepEqual((await documentIn('b')).document, { docId: 'b', title: 'Beta', text: 'second', metadata: {} });
    assert.deepEqual((await documentIn('42')).document, { docId: '42', title: '', text: 'third', metadata: { tags: ['x', 'y'] } });
  });

  it('loads a JSON array and replaces a re-ingested id', async () => {
    const path = file('docs.json', JSON.stringify([{ doc_id: 'a', title: 'Alpha two', text: 'replaced' }]));
    const result = await cli(env, 'ingest', path);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Ingested 1 documents/);
    const { document, count } = await documentIn('a');
    assert.equal(document!.title, 'Alpha two');
    assert.equal(count, 3);
  });

  it('reports a bad JSONL line by its 1-based number and writes nothing from the file', async () => {
    const path = file(
      'bad.jsonl',
      [JSON.stringify({ doc_id: 'new-1', text: 'x' }), '{"doc_id": "new-2", ', JSON.stringify({ doc_id: 'new-3' })].join('\n'),
    );
    const result = await cli(env, 'ingest', path);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /line 2/);
    assert.match(result.stderr, /Nothing from this file was written/);
    assert.equal((await documentIn('new-1')).document, undefined);
  });

  it('reports a bad JSON array element by its 0-based index', async () => {
    const path = file('bad.json', JSON.stringify([{ doc_id: 'ok' }, { title: 'no id' }]));
    const result = await cli(env, 'ingest', path);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /index 1: doc_id/);
    assert.equal((await documentIn('ok')).document, undefined);
  });

  it('rejects records with wrong field types, naming the field', async () => {
    for (const [record, field] of [
      [{ doc_id: 'x', title: 5 }, 'title'],
      [{ doc_id: 'x', text: ['a'] }, 'text'],
      [{ doc_id: '' }, 'doc_id'],
      [{ doc_id: { a: 1 } }, 'doc_id'],
      ['just a string', 'object'],
    ] as const) {
      const result = await cli(env, 'ingest', file('one.jsonl', JSON.stringify(record)));
      assert.equal(result.code, 1);
      assert.match(result.stderr, new RegExp(`line 1: .*${field}`));
    }
  });

  it('fails clearly for a missing file', async () => {
    const result = await cli(env, 'ingest', join(dir.path, 'nope.jsonl'));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /The file .*nope\.jsonl does not exist\./);
  });

  it('shows progress (documents and docs/s) on a terminal, and none when output is not a terminal', async () => {
    const lines = Array.from({ length: 2500 }, (_, index) => JSON.stringify({ doc_id: `bulk-${index}`, text: `document ${index}` }));
    const path = file('bulk.jsonl', lines.join('\n'));
    const onTerminal = await cliOn({ interactive: true }, env, 'ingest', path);
    assert.equal(onTerminal.code, 0, onTerminal.stderr);
    assert.match(onTerminal.stderr, /\r1000 documents, \d+ docs\/s/);
    assert.match(onTerminal.stderr, /\r2500 documents, \d+ docs\/s/);
    const piped = await cli(env, 'ingest', path);
    assert.equal(piped.stderr, '');
  });
});
