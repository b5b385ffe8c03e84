import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readWordPiece, TokenizerFormatError, WordPieceTokenizer } from '../../../src/embeddings/local/wordpiece.js';
import { SPECIAL_TOKENS, tokenizerJson } from '../../support/onnx-model.js';

const WORDS = ['un', '##aff', '##able', 'running', 'run', '##ning', 'the', 'cafe', '!', ',', '.', 'data', '##base', '中', '文', 'hello', '$'];
const id = (token: string) => SPECIAL_TOKENS.length + WORDS.indexOf(token);
const [CLS, SEP, UNK] = [2, 3, 1];

function tokenizer(maxLength: number | null = 128, fallback = 512): WordPieceTokenizer {
  return new WordPieceTokenizer(readWordPiece(tokenizerJson(WORDS, maxLength), fallback));
}

describe('WordPiece tokenizer (tokenizer.json)', () => {
  it('splits words into the longest pieces of its vocabulary, between [CLS] and [SEP]', () => {
    assert.deepEqual(tokenizer().encode('unaffable running').ids, [CLS, id('un'), id('##aff'), id('##able'), id('running'), SEP]);
    assert.deepEqual(tokenizer().encode('database').ids, [CLS, id('data'), id('##base'), SEP]);
  });

  it('lowercases, strips accents, sets punctuation and CJK characters apart, drops control characters', () => {
    assert.deepEqual(tokenizer().encode('The  CAFÉ,\u0007 hello!').ids, [CLS, id('the'), id('cafe'), id(','), id('hello'), id('!'), SEP]);
    assert.deepEqual(tokenizer().encode('中文').ids, [CLS, id('中'), id('文'), SEP]);
    assert.deepEqual(tokenizer().encode('$hello').ids, [CLS, id('$'), id('hello'), SEP], 'ASCII symbols are punctuation to BERT');
  });

  it('makes a word with no spelling in the vocabulary one [UNK]', () => {
    assert.deepEqual(tokenizer().encode('the zebra runs').ids, [CLS, id('the'), UNK, UNK, SEP]);
  });

  it('truncates to the tokenizer’s max_length, specials included; without one, to the folder’s', () => {
    const long = Array.from({ length: 50 }, () => 'hello').join(' ');
    assert.equal(tokenizer(8).encode(long).ids.length, 8);
    assert.deepEqual(tokenizer(8).encode(long).ids.slice(-2), [id('hello'), SEP]);
    assert.equal(tokenizer(null, 12).encode(long).ids.length, 12);
    assert.deepEqual(tokenizer().encode('hello').typeIds, [0, 0, 0]);
  });

  it('refuses a tokenizer of another kind, saying which', () => {
    const unigram = { ...tokenizerJson(WORDS), model: { type: 'Unigram', vocab: [] } };
    assert.throws(
      () => readWordPiece(unigram, 512),
      (error: Error) => error instanceof TokenizerFormatError && /"Unigram"/.test(error.message),
    );
    const metaspace = { ...tokenizerJson(WORDS), pre_tokenizer: { type: 'Metaspace' } };
    assert.throws(() => readWordPiece(metaspace, 512), /pre_tokenizer is "Metaspace"/);
  });
});
