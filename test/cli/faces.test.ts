import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { cli } from '../support/cli-helper.js';
import { tempDir } from '../support/helper.js';

const FACES = new URL('../fixtures/faces/', import.meta.url).pathname;

describe('metered-search faces', () => {
  const dir = tempDir();
  const env = { DATA_DIR: join(dir.path, 'data'), FACE_WORKERS: '1' };
  after(() => dir.remove());
  const manifest = (name: string, lines: unknown[]) => {
    const path = join(dir.path, name);
    writeFileSync(path, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n'));
    return path;
  };

  it('enrolls nothing when any line is wrong, and says which line', async () => {
    const good = { doc_id: 'df01', image: join(FACES, 'deepface/img1.jpg'), face_file: 'https://faces.example/1.jpg' };
    for (const [lines, message] of [
      [[good, '{not json'], /line 2: not valid JSON/],
      [[good, { ...good, doc_id: '' }], /line 2: "doc_id"/],
      [[good, { ...good, doc_id: 'x', image: 'no/such/file.jpg' }], /line 2: "image" is neither a readable file nor base64/],
      [[good, { ...good, doc_id: 'x', image: Buffer.from('not an image').toString('base64') }], /line 2: the image could not be decoded/],
      [[good, { ...good, attributes: [1] }], /line 2: "attributes" must be an object/],
    ] as const) {
      const result = await cli(env, 'faces', 'enroll', manifest('bad.jsonl', [...lines]));
      assert.equal(result.code, 1);
      assert.match(result.stderr, message);
    }
    assert.deepEqual(JSON.parse((await cli(env, 'faces', 'list', '--json')).stdout), []);
  });

  it('enrolls a manifest (file paths relative to it), lists and removes faces', async () => {
    const path = manifest('gallery.jsonl', [
      { doc_id: 'df01', image: join(FACES, 'deepface/img1.jpg'), face_file: 'https://faces.example/1.jpg', attributes: { desk: 4 } },
      { doc_id: 'amy', image: relative(dir.path, join(FACES, 'faceapijs-bbt/amy1.png')), face_file: 'https://faces.example/amy.png' },
    ]);
    const enrolled = await cli(env, 'faces', 'enroll', path, '--json');
    assert.equal(enrolled.code, 0, enrolled.stderr);
    assert.equal(JSON.parse(enrolled.stdout).enrolled, 2);
    const listed = JSON.parse((await cli(env, 'faces', 'list', '--json')).stdout) as Array<{ doc_id: string; attributes: unknown; engine: string }>;
    assert.deepEqual(
      listed.map((face) => face.doc_id),
      ['amy', 'df01'],
    );
    assert.deepEqual(listed[1].attributes, { desk: 4 });
    assert.match(listed[0].engine, /face-api@1\.7\.15/);
    assert.match((await cli(env, 'faces', 'list')).stdout, /DOC_ID\s+FACE_FILE/);
    assert.equal((await cli(env, 'faces', 'remove', 'amy')).code, 0);
    const missing = await cli(env, 'faces', 'remove', 'amy');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No enrolled face has doc_id "amy"/);
  });
});
