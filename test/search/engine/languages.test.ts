import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SEARCH_LANGUAGES } from '../../../src/rules.js';
import { queryTokens } from '../../../src/search/engine/analysis.js';
import { ENGLISH, LANGUAGE_CODES, type Language, languageNamed } from '../../../src/search/engine/languages.js';

const language = (code: string) => languageNamed(code) as Language;
const stems = (code: string, text: string) => queryTokens(text, 64, language(code)).map((token) => language(code).stem(token));

describe('languages', () => {
  it('analyses every language the rules allow, and no other', () => {
    assert.deepEqual([...LANGUAGE_CODES].sort(), [...SEARCH_LANGUAGES].sort());
    assert.equal(languageNamed('xx'), undefined);
    assert.equal(languageNamed('EN'), undefined);
  });

  it('English is Porter and Lucene’s 33 stopwords, as the index has always analysed it', () => {
    assert.equal(ENGLISH.stopwords.size, 33);
    assert.deepEqual(stems('en', 'The running of the breaches'), ['run', 'breach']);
    assert.equal(ENGLISH.stem('p53'), 'p53');
  });

  it('the Snowball languages find inflections, whether or not the accents are typed', () => {
    assert.deepEqual(stems('de', 'Vertrag'), stems('de', 'Verträgen'));
    assert.deepEqual([...new Set(stems('de', 'Verträge Vertrages'))], ['vertrag']);
    assert.deepEqual(stems('de', 'Straße'), stems('de', 'Strasse'));
    assert.deepEqual(stems('fr', 'données personnelles'), stems('fr', 'donnée personnelle'));
    assert.deepEqual(stems('fr', 'donnees'), stems('fr', 'données'));
    assert.deepEqual(stems('es', 'protección datos'), stems('es', 'proteccion dato'));
    assert.deepEqual(stems('it', 'contratti'), stems('it', 'contratto'));
    assert.deepEqual(stems('nl', 'verdragen'), stems('nl', 'verdrag'));
    assert.deepEqual(stems('pt', 'contratos'), stems('pt', 'contrato'));
    assert.deepEqual(stems('sv', 'avtalen'), stems('sv', 'avtal'));
    assert.deepEqual(stems('da', 'aftalerne'), stems('da', 'aftale'));
    assert.deepEqual(stems('fi', 'taloissa talossa'), ['talo', 'talo']);
    assert.deepEqual(stems('fi', 'sopimuksessa'), stems('fi', 'sopimukset'));
    assert.equal(language('de').stem('2016'), '2016');
  });

  it('drops each language’s Snowball stopwords, folded as tokens are', () => {
    assert.deepEqual(stems('de', 'die Verträge für über'), ['vertrag']);
    assert.deepEqual(stems('fr', 'les données été'), stems('fr', 'données'));
    assert.deepEqual(stems('en', 'die'), ['die'], 'a German stopword is an English word');
  });

  it('none keeps every word as it is', () => {
    assert.deepEqual(stems('none', 'The running breaches'), ['the', 'running', 'breaches']);
  });

  it('splits Chinese and Japanese text into words; other languages keep a run of letters whole', () => {
    assert.deepEqual(queryTokens('個人データの保護に関する規則', 64, language('ja')), ['個人', 'データ', 'の', '保護', 'に関する', '規則']);
    assert.deepEqual(queryTokens('个人数据保护条例', 64, language('zh')), ['个人', '数据', '保护', '条例']);
    assert.deepEqual(queryTokens('个人数据保护条例', 64, ENGLISH), ['个人数据保护条例']);
    assert.deepEqual(queryTokens('GDPR の IL-6', 64, language('ja')), ['gdpr', 'の', 'il', '6']);
  });
});
