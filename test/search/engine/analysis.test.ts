import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forEachToken, queryTokens, scanTokens } from '../../../src/search/engine/analysis.js';
import { ENGLISH } from '../../../src/search/engine/languages.js';

const stemOf = (word: string) => ENGLISH.stem(word);

import { TokenTable } from '../../../src/search/engine/token-table.js';

function tokens(text: string): string[] {
  const found: string[] = [];
  forEachToken(text, (token) => found.push(token));
  return found;
}

describe('text analysis', () => {
  it('splits at anything but letters, numbers and marks, lower-cased, Latin diacritics folded', () => {
    assert.deepEqual(tokens('Hello, WORLD! résumé Café naïve'), ['hello', 'world', 'resume', 'cafe', 'naive']);
    assert.deepEqual(tokens('x-ray CD4+ IL-6 p53 3.14'), ['x', 'ray', 'xray', 'cd4', 'il', '6', 'il6', 'p53', '3', '14']);
    assert.deepEqual(tokens('ＡＢＣ１２３'), ['abc123'], 'NFKC: full-width forms are ASCII');
  });

  it('gives a compound joined by hyphens or slashes its parts and then their concatenation', () => {
    assert.deepEqual(tokens('HIV/AIDS beta\u2010catenin anti-TNF-alpha'), [
      'hiv',
      'aids',
      'hivaids',
      'beta',
      'catenin',
      'betacatenin',
      'anti',
      'tnf',
      'alpha',
      'antitnfalpha',
    ]);
    assert.deepEqual(tokens('TNF-α Müller-Lyer'), ['tnf', 'α', 'tnfα', 'muller', 'lyer', 'mullerlyer']);
    assert.deepEqual(tokens('a - b c--d e/ f -g h-'), ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], 'one joiner between two tokens, nothing else');
    assert.deepEqual(queryTokens('the in-vivo in vivo', 64), ['vivo', 'invivo'], 'a stopword part still joins');
  });

  it('keeps other scripts as words and skips what is not a letter, including astral symbols', () => {
    assert.deepEqual(tokens('中文 テスト 한국어 العربية'), ['中文', 'テスト', '한국어', 'العربية']);
    assert.deepEqual(tokens('a😀b 𝔘𝔫𝔦'), ['a', 'b', 'uni']);
    assert.deepEqual(tokens(''), []);
    assert.deepEqual(tokens(' \t\n.,;'), []);
  });

  it('hashes plain tokens by their lower-cased characters, so a table finds them without a string', () => {
    const table = new TokenTable(100, 4);
    scanTokens('Walrus', (source, start, end, _plain, hash) => table.insert(source.slice(start, end).toLowerCase(), hash, 7));
    const found: number[] = [];
    scanTokens('the WALRUS walrus walrusses', (source, start, end, plain, hash) => found.push(plain ? table.find(source, start, end, hash) : -2));
    assert.deepEqual(found, [-1, 7, 7, -1]);
    for (let id = 0; id < 50; id++) scanTokens(`word${id}`, (source, start, end, _plain, hash) => table.insert(source.slice(start, end), hash, id));
    scanTokens('word42', (source, start, end, _plain, hash) => assert.equal(table.find(source, start, end, hash), 42));
    const joined: number[] = [];
    scanTokens('IL-6', (source, start, end, _plain, hash, isJoined) => isJoined && table.insert(source.slice(start, end).toLowerCase(), hash, 99));
    scanTokens(
      'il-6 IL-6 il/6',
      (source, start, end, plain, hash, isJoined) => isJoined && joined.push(plain ? table.find(source, start, end, hash) : -2),
    );
    assert.deepEqual(joined, [99, 99, -1], 'a joined token is found by its scanned characters, joiner included');
  });

  it('finds short tokens (kept in their slot) and long ones (kept apart) alike, through growth and a fresh start', () => {
    const table = new TokenTable(40, 4);
    const words = ['a', 'sixteenxletters0', 'seventeenxletters', 'supercalifragilisticexpialidocious'];
    const idOf = (text: string): number => {
      let id = -2;
      scanTokens(text, (source, start, end, _plain, hash) => (id = table.find(source, start, end, hash)));
      return id;
    };
    words.forEach((word, id) => {
      scanTokens(word, (source, start, end, _plain, hash) => table.insert(source.slice(start, end), hash, id));
    });
    for (let id = 0; id < 30; id++)
      scanTokens(`filler${id}`, (source, start, end, _plain, hash) => table.insert(source.slice(start, end), hash, 100 + id));
    assert.deepEqual(
      words.map((word) => word.length),
      [1, 16, 17, 34],
    );
    assert.deepEqual(
      words.map((word) => idOf(word.toUpperCase())),
      [0, 1, 2, 3],
      'every length found after the table grew',
    );
    assert.equal(idOf('supercalifragilisticexpialidociouz'), -1, 'a long token differing in its last character');
    assert.equal(idOf('sixteenxletters1'), -1, 'a short token differing in its last character');
    assert.equal(idOf('filler29'), 129);
    for (let id = 30; id < 70; id++)
      scanTokens(`filler${id}`, (source, start, end, _plain, hash) => table.insert(source.slice(start, end), hash, 100 + id));
    assert.equal(idOf('a'), -1, 'full past its limit, the table starts over');
    assert.equal(idOf('filler69'), 169);
  });

  it('turns query text into distinct tokens without stopwords, and stems English words only', () => {
    assert.deepEqual(queryTokens('The data and the DATA of breaches', 64), ['data', 'breaches']);
    assert.deepEqual(queryTokens('a b c d e f', 3), ['b', 'c', 'd']);
    assert.equal(stemOf('breaches'), 'breach');
    assert.equal(stemOf('running'), 'run');
    assert.equal(stemOf('p53'), 'p53');
    assert.equal(stemOf('テスト'), 'テスト');
  });
});
