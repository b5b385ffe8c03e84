import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CliError } from '../../src/cli/errors.js';
import { plainName, printable, printableValue } from '../../src/cli/printable.js';

describe('what the CLI prints and takes', () => {
  it('escapes control, bidirectional and line-separator characters, so a value cannot forge or reorder a line', () => {
    assert.equal(printableValue('red\u001b[31m'), 'red\\x1b[31m');
    assert.equal(printableValue('invoice\u202etxt.exe'), 'invoice\\u202etxt.exe');
    assert.equal(printableValue('a\u2066b\u2069c\u200e\u200f'), 'a\\u2066b\\u2069c\\u200e\\u200f');
    assert.equal(printableValue('one\u2028two\u2029'), 'one\\u2028two\\u2029');
    assert.equal(printable('kept\n\tlayout\u202e'), 'kept\n\tlayout\\u202e');
    assert.equal(printableValue('عربي Café 😀'), 'عربي Café 😀', 'letters of every script are printed as they are');
  });

  it('refuses a name holding one of them, or an unpaired surrogate', () => {
    for (const name of ['a\u202eb', 'a\u2028b', 'lone \ud800', 'esc\u001b']) {
      assert.throws(
        () => plainName(name, '--name'),
        (error: unknown) => error instanceof CliError && /--name must not hold/.test(error.message),
      );
    }
    assert.equal(plainName('Café 😀', '--name'), 'Café 😀');
  });
});
