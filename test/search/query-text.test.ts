import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseQueryText } from '../../src/search/query-text.js';

describe('query text', () => {
  it('takes a word after a minus at the start of a word as an exclusion', () => {
    assert.deepEqual(parseQueryText('data breach -gdpr'), { wanted: 'data breach ', excluded: 'gdpr' });
    assert.deepEqual(parseQueryText('-eu -uk privacy'), { wanted: '  privacy', excluded: 'eu uk' });
    assert.deepEqual(parseQueryText('-IL-6 cytokine'), { wanted: ' cytokine', excluded: 'IL-6' });
  });

  it('leaves any other minus as plain text, and text without one exactly as it is', () => {
    for (const text of ['well-known facts', 'a - b', '- alone', '-"a phrase"', '--double', 'plain text', 'trailing-']) {
      assert.deepEqual(parseQueryText(text), { wanted: text, excluded: '' }, text);
    }
  });
});
