import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { phraseMatcher, phraseWords } from '../../src/search/phrase.js';

const holds = (phrase: string, text: string) => phraseMatcher(phraseWords(phrase))(text);

describe('phrases', () => {
  it('finds the words in order, adjacent after analysis, whatever their case and inflection', () => {
    assert.ok(holds('right to erasure', 'The Right to Erasure applies.'));
    assert.ok(holds('data breaches', 'a personal data breach was notified'));
    assert.ok(!holds('erasure right', 'the right to erasure'));
    assert.ok(!holds('data breach', 'data about a breach'));
    assert.ok(holds('données personnelles', 'les DONNÉES personnelles'));
  });

  it('keeps a stopword its place: any one word may stand there, and none may be missing', () => {
    assert.deepEqual(phraseWords('the right to erasure'), ['right', null, 'erasure']);
    assert.ok(holds('right to erasure', 'right of erasure'));
    assert.ok(!holds('right to erasure', 'right erasure'));
    assert.ok(!holds('right to erasure', 'right to the erasure'));
  });

  it('matches a repeated word only where it repeats, and gives the same answer for the same token met again', () => {
    const matcher = phraseMatcher(phraseWords('loan loan'));
    assert.ok(!matcher('loan and loan'));
    assert.ok(matcher('a loan loan here'));
    assert.ok(!matcher('LOAN alone, then Loan'));
    assert.ok(matcher('Loan LOAN'));
  });

  it('takes a compound by its parts, and matches nothing for a phrase of stopwords alone', () => {
    assert.ok(holds('IL-6 levels', 'raised il 6 levels'));
    assert.deepEqual(phraseWords('to the'), []);
    assert.ok(!holds('to the', 'to the'));
  });
});
