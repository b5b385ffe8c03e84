import { stemmer as danish } from '@orama/stemmers/danish';
import { stemmer as dutch } from '@orama/stemmers/dutch';
import { stemmer as finnish } from '@orama/stemmers/finnish';
import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';
import { stemmer as hungarian } from '@orama/stemmers/hungarian';
import { stemmer as italian } from '@orama/stemmers/italian';
import { stemmer as norwegian } from '@orama/stemmers/norwegian';
import { stemmer as portuguese } from '@orama/stemmers/portuguese';
import { stemmer as romanian } from '@orama/stemmers/romanian';
import { stemmer as russian } from '@orama/stemmers/russian';
import { stemmer as spanish } from '@orama/stemmers/spanish';
import { stemmer as swedish } from '@orama/stemmers/swedish';
import { stemmer as turkish } from '@orama/stemmers/turkish';
import { stopwords as danishStopwords } from '@orama/stopwords/danish';
import { stopwords as dutchStopwords } from '@orama/stopwords/dutch';
import { stopwords as finnishStopwords } from '@orama/stopwords/finnish';
import { stopwords as frenchStopwords } from '@orama/stopwords/french';
import { stopwords as germanStopwords } from '@orama/stopwords/german';
import { stopwords as hungarianStopwords } from '@orama/stopwords/hungarian';
import { stopwords as italianStopwords } from '@orama/stopwords/italian';
import { stopwords as norwegianStopwords } from '@orama/stopwords/norwegian';
import { stopwords as portugueseStopwords } from '@orama/stopwords/portuguese';
import { stopwords as romanianStopwords } from '@orama/stopwords/romanian';
import { stopwords as russianStopwords } from '@orama/stopwords/russian';
import { stopwords as spanishStopwords } from '@orama/stopwords/spanish';
import { stopwords as swedishStopwords } from '@orama/stopwords/swedish';
import { stopwords as turkishStopwords } from '@orama/stopwords/turkish';
import { stemmer as porter } from 'stemmer';

/**
 * How the words of one language are analysed once the scanner has made them tokens (lower case,
 * NFKC, Latin diacritics removed): which are stopwords, and their stems.
 */
export interface Language {
  /** ISO 639-1, or `none`. */
  readonly code: string;
  readonly stopwords: ReadonlySet<string>;
  /** The token's stem; tokens holding digits are kept as they are. */
  stem(token: string): string;
  /** Chinese and Japanese: the text is split into words by this before its tokens are scanned. */
  readonly segmenter?: Intl.Segmenter;
}

/** Lucene's English stopword list (33 words). */
export const STOPWORDS: ReadonlySet<string> = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);

const LATIN_DIACRITICS = /[\u0300-\u036f]/g;
const ASCII_WORD = /^[a-z]+$/;
const DIGIT = /\p{N}/u;
const STEM_CACHE_LIMIT = 200_000;

/** A word as the scanner makes tokens of it (see tokenText): Latin diacritics removed. */
function folded(word: string): string {
  return word.normalize('NFD').replace(LATIN_DIACRITICS, '').normalize('NFC');
}

/** A stemmer remembering its last STEM_CACHE_LIMIT answers: ingestion stems each distinct token once. */
function cached(stemWord: (token: string) => string): (token: string) => string {
  const stems = new Map<string, string>();
  return (token) => {
    let stem = stems.get(token);
    if (stem === undefined) {
      stem = stemWord(token);
      if (stems.size >= STEM_CACHE_LIMIT) stems.clear();
      stems.set(token, stem);
    }
    return stem;
  };
}

/** English as the index has always analysed it: Porter's stemmer, on words of ASCII letters only. */
export const ENGLISH: Language = {
  code: 'en',
  stopwords: STOPWORDS,
  stem: cached((token) => (token.length > 2 && ASCII_WORD.test(token) ? porter(token) : token)),
};

/**
 * A Snowball language: its stemmer applied to the token as folded (so that a word typed without
 * its accents finds the word written with them: "donnees" and "données" share a stem), and its
 * Snowball stopword list folded the same way.
 */
function snowball(code: string, stemWord: (word: string) => string, stopwords: readonly string[]): Language {
  return {
    code,
    stopwords: new Set(stopwords.map(folded)),
    stem: cached((token) => (DIGIT.test(token) ? token : folded(stemWord(token)))),
  };
}

const NO_STOPWORDS: ReadonlySet<string> = new Set();
const unchanged = (token: string) => token;

/** Word segmentation by ICU's dictionary, the same for Chinese and Japanese text whatever the locale. */
function segmenting(code: string): Language {
  return { code, stopwords: NO_STOPWORDS, stem: unchanged, segmenter: new Intl.Segmenter(code, { granularity: 'word' }) };
}

const LANGUAGES: ReadonlyMap<string, Language> = new Map(
  [
    ENGLISH,
    snowball('da', danish, danishStopwords),
    snowball('de', german, germanStopwords),
    snowball('es', spanish, spanishStopwords),
    snowball('fi', finnish, finnishStopwords),
    snowball('fr', french, frenchStopwords),
    snowball('hu', hungarian, hungarianStopwords),
    snowball('it', italian, italianStopwords),
    snowball('nl', dutch, dutchStopwords),
    snowball('no', norwegian, norwegianStopwords),
    snowball('pt', portuguese, portugueseStopwords),
    snowball('ro', romanian, romanianStopwords),
    snowball('ru', russian, russianStopwords),
    snowball('sv', swedish, swedishStopwords),
    snowball('tr', turkish, turkishStopwords),
    segmenting('ja'),
    segmenting('zh'),
    { code: 'none', stopwords: NO_STOPWORDS, stem: unchanged },
  ].map((language) => [language.code, language]),
);

/** The codes a document's `language` and a query's may name. */
export const LANGUAGE_CODES: readonly string[] = [...LANGUAGES.keys()].sort();

/** The language of a code, or undefined for one not analysed here. */
export function languageNamed(code: string): Language | undefined {
  return LANGUAGES.get(code);
}
