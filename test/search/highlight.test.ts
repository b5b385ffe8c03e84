import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyze } from '../../src/search/analyzer.js';
import { DEFAULT_HIGHLIGHT, highlightsOf, highlightTerms } from '../../src/search/highlight.js';

const stems = (query: string) => highlightTerms(analyze(query));
const document = (title: string, text: string, metadata: Record<string, unknown> = {}) => ({ title, text, metadata });

describe('highlights', () => {
  it('marks a phrase as one span, stopwords inside it included, and its words elsewhere alone', () => {
    const terms = highlightTerms([], [['right', null, 'erasure']]);
    const { title } = highlightsOf(document('The right to erasure, and erasure alone', ''), terms, DEFAULT_HIGHLIGHT);
    assert.equal(title, 'The <mark>right to erasure</mark>, and erasure alone');
    const both = highlightTerms(['erasure'], [['right', null, 'erasure']]);
    assert.equal(
      highlightsOf(document('Rights to erasure; erasure', ''), both, DEFAULT_HIGHLIGHT).title,
      '<mark>Rights to erasure</mark>; <mark>erasure</mark>',
    );
  });

  it('marks the words that match after analysis, not the words spelt alike', () => {
    const { title } = highlightsOf(document('Data breaches and the breach of duty', ''), stems('breach'), DEFAULT_HIGHLIGHT);
    assert.equal(title, 'Data <mark>breaches</mark> and the <mark>breach</mark> of duty');
    const accented = highlightsOf(document('Le Résumé', ''), stems('resume'), DEFAULT_HIGHLIGHT);
    assert.equal(accented.title, 'Le <mark>Résumé</mark>', 'diacritics compare as the index compares them');
    const compound = highlightsOf(document('IL-6 levels', ''), stems('il6'), DEFAULT_HIGHLIGHT);
    assert.equal(compound.title, '<mark>IL-6</mark> levels', 'a compound matched joined is one span');
    assert.equal(highlightsOf(document('The cat', ''), stems('the'), DEFAULT_HIGHLIGHT).title, 'The cat', 'stopwords match nothing');
  });

  it('escapes the text around the tags, unless asked not to', () => {
    const planted = document('<script>alert("breach")</script> & breach', '');
    assert.equal(
      highlightsOf(planted, stems('breach'), DEFAULT_HIGHLIGHT).title,
      '&lt;script&gt;alert(&quot;<mark>breach</mark>&quot;)&lt;/script&gt; &amp; <mark>breach</mark>',
    );
    const raw = highlightsOf(planted, stems('breach'), { ...DEFAULT_HIGHLIGHT, escape: false, preTag: '[', postTag: ']' });
    assert.equal(raw.title, '<script>alert("[breach]")</script> & [breach]');
  });

  it('cuts the text to the window holding the most distinct matched words, at word boundaries, marked …', () => {
    const filler = (n: number) => Array.from({ length: n }, (_, index) => `word${index}`).join(' ');
    const text = `${filler(40)} erasure once. ${filler(30)} the right to erasure of personal data. ${filler(40)}`;
    const { text: snippet } = highlightsOf(document('t', text), stems('right erasure personal'), { ...DEFAULT_HIGHLIGHT, snippetChars: 80 });
    assert.ok(snippet?.startsWith('…') && snippet.endsWith('…'), snippet);
    assert.match(snippet ?? '', /<mark>right<\/mark> to <mark>erasure<\/mark> of <mark>personal<\/mark>/);
    const plain = (snippet ?? '').replaceAll('<mark>', '').replaceAll('</mark>', '').slice(1, -1);
    assert.ok(plain.length <= 80, `${plain.length} characters`);
    assert.ok(text.includes(plain), 'whole words, as they stand in the text');
    assert.equal(
      highlightsOf(document('t', 'short text'), stems('text'), DEFAULT_HIGHLIGHT).text,
      'short <mark>text</mark>',
      'a short text comes whole',
    );
  });

  it('gives the beginning of the text when no word matches, and named string metadata whole', () => {
    const text = `First words here. ${'more words '.repeat(40)}`;
    const { text: start } = highlightsOf(document('t', text), highlightTerms([]), { ...DEFAULT_HIGHLIGHT, snippetChars: 40 });
    assert.ok(start?.startsWith('First words here.') && start.endsWith('…'), start);
    const named = highlightsOf(document('t', 'x', { court: 'Court of Justice', year: 2016 }), stems('justice'), {
      ...DEFAULT_HIGHLIGHT,
      fields: ['court', 'year', 'missing'],
    });
    assert.deepEqual(named, { court: 'Court of <mark>Justice</mark>' }, 'non-string and absent fields are left out');
  });
});
