// bench:languages — a German corpus beside an English one of the same statistics: the synthetic
// corpus of bench:search (Zipf s = 1.07 over 60,000 words, titles of 4-12 words, bodies of
// 120-400), its German twin made of the same words with umlauts and ß in a share of them and a
// German ending on every occurrence (-e, -en, -er, -es, -ern, -ung, -ungen or none), each document
// carrying "language": "de". Per round and language, alternated: a CLI ingest into a fresh data
// folder (docs/s), then 200 3-word queries one at a time over HTTP (the German ones inflected
// anew and sent with "language": "de"), two passes, the second measured. The ratios German /
// English are per round; the distinct stems of each vocabulary say the statistics match.
// LANGUAGES_SIZE (default 100,000) and LANGUAGES_ROUNDS (default 2).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGLISH, type Language, languageNamed } from '../src/search/engine/languages.js';
import { random } from '../test/support/random.js';
import { CLI, machineLine, ROOT, start, stop } from './lib.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.LANGUAGES_SIZE ?? 100_000);
const ROUNDS = Number(process.env.LANGUAGES_ROUNDS ?? 2);
const ENDINGS = ['', 'e', 'en', 'er', 'es', 'ern', 'ung', 'ungen'];
const GERMAN = languageNamed('de') as Language;

/** The English words made German-looking: some vowels with umlauts, some "ss" as ß, "sh" as "sch". */
function germanWords(english: string[]): string[] {
  return english.map((word, index) => {
    let german = word.replace('sh', 'sch');
    if (index % 3 === 0) german = german.replace('a', 'ä');
    if (index % 5 === 1) german = german.replace('o', 'ö');
    if (index % 7 === 2) german = german.replace('u', 'ü');
    if (index % 11 === 3) german = `${german}ß`;
    return german;
  });
}

const inflected = (word: string, next: () => number) => word + ENDINGS[Math.floor(next() * ENDINGS.length)];

function distinctStems(vocabulary: string[], language: Language): number {
  const next = random(3);
  return new Set(
    vocabulary.map((word) =>
      language.stem(
        language === ENGLISH
          ? word
          : inflected(word, next)
              .normalize('NFD')
              .replace(/[\u0300-\u036f]/g, ''),
      ),
    ),
  ).size;
}

interface Measured {
  docsPerSecond: number;
  p50: number;
  p99: number;
}

const percentile = (values: number[], share: number) => [...values].sort((a, b) => a - b)[Math.floor(share * (values.length - 1))] as number;

async function measure(file: string, texts: string[], language: string | undefined): Promise<Measured> {
  const work = mkdtempSync(join(tmpdir(), 'bench-languages-'));
  const env = {
    DATA_DIR: join(work, 'data'),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_S: '0',
    FACE_WORKERS: '0',
    SEED_DEMO: 'false',
  };
  try {
    const run = (args: string[]) =>
      execFileSync(process.execPath, [CLI, ...args, '--json'], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 20 });
    const ingested = JSON.parse(run(['ingest', file])) as { documentsPerSecond: number };
    const key = (JSON.parse(run(['keys', 'create', '--credits', '1000000000'])) as { key: string }).key;
    const service = await start([CLI, 'serve'], env, null);
    try {
      const requests = texts.map((text) => ({
        method: 'POST',
        path: '/query',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ query: text, top_k: 10, ...(language ? { language } : {}) }),
      }));
      const requestsFile = join(work, 'requests.json');
      writeFileSync(requestsFile, JSON.stringify(requests));
      const latencies = JSON.parse(
        execFileSync(process.execPath, [join(ROOT, 'bench/sequential-client.mjs'), service.url, requestsFile, '2'], { encoding: 'utf8' }),
      ) as number[];
      return { docsPerSecond: ingested.documentsPerSecond, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
    } finally {
      await stop(service.child);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`\n${machineLine('bench:languages')}  ${SIZE.toLocaleString('en')} documents, ${ROUNDS} rounds`);
  const english = words();
  const german = germanWords(english);
  console.log(
    `distinct stems of the 60,000 words: English ${distinctStems(english, ENGLISH).toLocaleString('en')}, German (inflected) ${distinctStems(german, GERMAN).toLocaleString('en')}`,
  );
  const folder = mkdtempSync(join(tmpdir(), 'bench-languages-corpus-'));
  try {
    const englishFile = join(folder, 'en.jsonl');
    const germanFile = join(folder, 'de.jsonl');
    await writeCorpus(englishFile, SIZE, english);
    await writeCorpus(germanFile, SIZE, german, { inflected, language: 'de' });
    const englishQueries = queries(english, 3);
    const next = random(17);
    // The same ranks as the English queries, each word with an ending of its own.
    const germanQueries = queries(german, 3).map((text) =>
      text
        .split(' ')
        .map((word) => inflected(word, next))
        .join(' '),
    );
    console.log('\n| round | English docs/s | German docs/s | ratio | English p50 ms | German p50 ms | ratio | English p99 ms | German p99 ms |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (let round = 1; round <= ROUNDS; round++) {
      const en = await measure(englishFile, englishQueries, undefined);
      const de = await measure(germanFile, germanQueries, 'de');
      console.log(
        `| ${round} | ${en.docsPerSecond.toLocaleString('en')} | ${de.docsPerSecond.toLocaleString('en')} | ${(de.docsPerSecond / en.docsPerSecond).toFixed(2)} | ` +
          `${en.p50.toFixed(2)} | ${de.p50.toFixed(2)} | ${(de.p50 / en.p50).toFixed(2)} | ${en.p99.toFixed(2)} | ${de.p99.toFixed(2)} |`,
      );
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
