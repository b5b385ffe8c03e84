import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normaliseBase64 } from '../../src/faces/image.js';

describe('base64 images', () => {
  it('accepts standard and URL-safe alphabets, with or without padding, ignoring whitespace', () => {
    for (let length = 1; length < 40; length++) {
      const bytes = Buffer.from(Array.from({ length }, (_, index) => (index * 97 + 251) % 256));
      for (const encoded of [
        bytes.toString('base64'),
        bytes.toString('base64url'),
        bytes.toString('base64').replace(/=+$/, ''),
        bytes.toString('base64').replace(/(.{4})/g, '$1\n '),
      ]) {
        const image = normaliseBase64(encoded);
        assert.ok(image.ok, encoded);
        if (!image.ok) continue;
        assert.equal(image.bytes, length);
        assert.deepEqual(Buffer.from(image.base64, 'base64'), bytes);
      }
    }
  });

  it('rejects text that is not base64, with a reason', () => {
    for (const input of ['', '   ', 'abc!', 'a', 'abcde', 'ab=c', 'abc===', '%%%%']) {
      const image = normaliseBase64(input);
      assert.equal(image.ok, false, input);
    }
  });
});
