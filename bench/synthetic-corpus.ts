// The synthetic corpus of bench:search and bench:refresh: a Zipf-distributed vocabulary
// (s = 1.07, 60,000 made-up words), titles of 4-12 words, bodies of 120-400 words, metadata with a
// skewed jurisdiction, a category and a year; and query sets mixing common and rarer words. Every
// run builds the same corpus.

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { random } from '../test/support/random.js';

const VOCABULARY = 60_000;
const ZIPF_S = 1.07;
const JURISDICTIONS = ['US', 'EU', 'UK', 'CA', 'AU', 'DE', 'FR', 'JP', 'IN', 'BR', 'ZA', 'SG'];
const CATEGORIES = Array.from({ length: 20 }, (_, index) => `category-${index}`);

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'shi', 'po', 've', 'dra', 'gel', 'mon', 'fir', 'qua', 'zen', 'tor', 'bel', 'cy', 'ux', 'an'];
export function words(): string[] {
  const next = random(7);
  const seen = new Set<string>();
  while (seen.size < VOCABULARY) {
    const length = 2 + Math.floor(next() * 3);
    seen.add(Array.from({ length }, () => SYLLABLES[Math.floor(next() * SYLLABLES.length)]).join(''));
  }
  return [...seen];
}

/** Samples word ranks from Zipf(s) through the cumulative distribution. */
function zipfSampler(next: () => number): () => number {
  const cumulative = new Float64Array(VOCABULARY);
  let sum = 0;
  for (let rank = 0; rank < VOCABULARY; rank++) cumulative[rank] = sum += 1 / (rank + 1) ** ZIPF_S;
  return () => {
    const target = next() * sum;
    let low = 0;
    let high = VOCABULARY - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle] < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

/**
 * The corpus as JSON lines. `inflected` gives each occurrence of a word its written form (a German
 * ending, say); `language` is written on every document.
 */
export async function writeCorpus(
  path: string,
  size: number,
  vocabulary: string[],
  options: { inflected?: (word: string, next: () => number) => string; language?: string } = {},
): Promise<void> {
  const next = random(size);
  const rank = zipfSampler(next);
  const { inflected } = options;
  const word = inflected ? () => inflected(vocabulary[rank()], next) : () => vocabulary[rank()];
  const text = (count: number) => Array.from({ length: count }, word).join(' ');
  const out = createWriteStream(path);
  for (let index = 0; index < size; index++) {
    const document = {
      doc_id: `doc-${index}`,
      title: text(4 + Math.floor(next() * 9)),
      text: text(120 + Math.floor(next() * 281)),
      jurisdiction: JURISDICTIONS[Math.min(JURISDICTIONS.length - 1, Math.floor(-Math.log(1 - next()) * 2.5))],
      category: CATEGORIES[Math.floor(next() * CATEGORIES.length)],
      year: 1990 + Math.floor(next() * 35),
      ...(options.language ? { language: options.language } : {}),
    };
    if (!out.write(`${JSON.stringify(document)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** Queries mixing common words (ranks 1-100, the stopword-like head of the Zipf curve) with rarer ones. */
export function queries(vocabulary: string[], terms: number): string[] {
  const next = random(terms * 101);
  return Array.from({ length: 200 }, () =>
    Array.from({ length: terms }, (_, position) => {
      const common = position === 0 || next() < 0.4;
      return vocabulary[common ? Math.floor(next() * 100) : 100 + Math.floor(next() * 20_000)];
    }).join(' '),
  );
}

/**
 * Queries of rare words only (ranks 40,000-60,000, each in about 370 documents at a million):
 * their searches cost little, so under load they show what the rest of a request costs.
 */
export function rareQueries(vocabulary: string[], terms: number): string[] {
  const next = random(terms * 211);
  return Array.from({ length: 200 }, () => Array.from({ length: terms }, () => vocabulary[40_000 + Math.floor(next() * 20_000)]).join(' '));
}
