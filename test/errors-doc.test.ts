import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { errorCatalogue } from '../src/errors.js';

describe('docs/errors.md', () => {
  it('lists every error of the catalogue with its HTTP status', () => {
    const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    for (const [code, error] of Object.entries(errorCatalogue)) {
      assert.match(doc, new RegExp(`\\| ${code} \\| ${error.status} \\|`), code);
    }
  });

  it('lists no error the catalogue does not have', () => {
    const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    const listed = [...doc.matchAll(/^\| ([A-Z][A-Z_]+) \| (\d{3}) \|/gm)].map((match) => match[1]);
    assert.ok(listed.length > 0, 'the table was found');
    assert.deepEqual(
      listed.filter((code) => !(code in errorCatalogue)),
      [],
      'every code in docs/errors.md is in src/errors.ts',
    );
  });
});
