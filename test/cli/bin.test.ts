import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/helper.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')).bin['metered-search'] as string;

describe('the built bin file, end to end', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('is built by npm install (prepare) and runs the commands', () => {
    assert.ok(existsSync(`${ROOT}${BIN}`), `${BIN} exists (npm install runs the build)`);
    const env = { ...process.env, DATA_DIR: dir.path };
    const created = JSON.parse(
      execFileSync(process.execPath, [`${ROOT}${BIN}`, 'keys', 'create', '--credits', '7', '--json'], { env, encoding: 'utf8' }),
    );
    assert.equal(created.balance, 7);
    const listed = execFileSync(process.execPath, [`${ROOT}${BIN}`, 'keys', 'list'], { env, encoding: 'utf8' });
    assert.match(listed, new RegExp(created.id));
    const help = spawnSync(process.execPath, [`${ROOT}${BIN}`, '--help'], { env, encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /serve/);
    const wrong = spawnSync(process.execPath, [`${ROOT}${BIN}`, 'keys', 'topup', 'key_x', '--credits', '1'], { env, encoding: 'utf8' });
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /No key matches/);
  });
});
