import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseQueryText, withLastWordPrefix } from '../../src/search/query-text.js';

const plain = (wanted: string, excluded = '') => ({ wanted, excluded, phrases: [], excludedPhrases: [], prefixes: [] });

describe('query text', () => {
  it('takes a word after a minus at the start of a word as an exclusion', () => {
    assert.deepEqual(parseQueryText('data breach -gdpr'), plain('data breach ', 'gdpr'));
    assert.deepEqual(parseQueryText('-eu -uk privacy'), plain('  privacy', 'eu uk'));
    assert.deepEqual(parseQueryText('-IL-6 cytokine'), plain(' cytokine', 'IL-6'));
  });

  it('takes text in double quotes as a phrase, and after a minus as a phrase to leave out', () => {
    assert.deepEqual(parseQueryText('"right to erasure" gdpr'), {
      wanted: '  gdpr',
      excluded: '',
      phrases: ['right to erasure'],
      excludedPhrases: [],
      prefixes: [],
    });
    assert.deepEqual(parseQueryText('breach -"data controller"'), {
      wanted: 'breach  ',
      excluded: '',
      phrases: [],
      excludedPhrases: ['data controller'],
      prefixes: [],
    });
  });

  it('leaves any other minus or quote as plain text, and text without one exactly as it is', () => {
    for (const text of [
      'well-known facts',
      'a - b',
      '- alone',
      '--double',
      'plain text',
      'trailing-',
      '"unclosed phrase',
      'in"side word',
      'a* b',
      '* alone',
      'mid*dle',
      'IL-6*',
    ]) {
      assert.deepEqual(parseQueryText(text), plain(text), text);
    }
  });

  it('takes a word of at least 2 characters ending in * as a prefix', () => {
    assert.deepEqual(parseQueryText('data prot* breach'), { ...plain('data  breach'), prefixes: ['prot'] });
    assert.deepEqual(parseQueryText('Résu* -gdpr'), { ...plain(' ', 'gdpr'), prefixes: ['Résu'] });
  });

  it('makes the last word a prefix as the caller types, unless it ends a phrase or is too short', () => {
    assert.equal(withLastWordPrefix('data prot'), 'data prot*');
    assert.equal(withLastWordPrefix('data p'), 'data p');
    assert.equal(withLastWordPrefix('data prot '), 'data prot ');
    assert.equal(withLastWordPrefix('"data protection"'), '"data protection"');
    assert.equal(withLastWordPrefix('data -prot'), 'data -prot');
    assert.equal(withLastWordPrefix('prot*'), 'prot*');
  });
});
