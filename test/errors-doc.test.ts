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
});
