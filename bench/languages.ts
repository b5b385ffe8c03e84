// bench:languages — a German corpus beside an English one of the same statistics: the synthetic
// corpus of bench:search (Zipf s = 1.07 over 60,000 words, titles of 4-12 words, bodies of
// 120-400), and its German twin: the same 60,000 words made German (umlauts in about a third, ß
// in a tenth, "sch"), each with a German ending, drawn as often as German writes them (none for
// four words in ten, -en for two, -e, -er, -es, -s, -ung), so that words are about an eighth longer
// than the English ones, as German words are; each document carries "language": "de". Beside them,
// for what rich inflection costs, the German stems with one of eight endings drawn anew for every
// occurrence (eight times the written forms, longer words).
// Per round: a CLI ingest of each into a fresh data folder (docs/s), each round starting with the
// next corpus, then a service on each (SEARCH_THREADS=1, the three share 2 cores), then 200 3-word
// queries per corpus one at a time over HTTP, alternated query by query across the three, two
// passes, the second measured (the German queries as the documents write their words, the
// inflected corpus's with endings of their own; both sent with "language": "de"). Ratios are to
// English in the same round; the distinct stems of each vocabulary say the statistics match.
// LANGUAGES_SIZE (default 100,000) and LANGUAGES_ROUNDS (default 2).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGLISH, type Language, languageNamed } from '../src/search/engine/languages.js';
import { random } from '../test/support/random.js';
import { CLI, machineLine, median, ROOT, start, stop } from './lib.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.LANGUAGES_SIZE ?? 100_000);
const ROUNDS = Number(process.env.LANGUAGES_ROUNDS ?? 2);
const ENDINGS = ['', 'e', 'en', 'er', 'es', 'ern', 'ung', 'ungen'];
/** One word's ending in the German twin, in about the shares German text has them. */
const WRITTEN_ENDINGS = ['', '', '', '', 'en', 'en', 'e', 'er', 'es', 's', '', 'en', 'e', 'ung', '', 'er', 'e', 'en', '', 's'];
const GERMAN = languageNamed('de') as Language;

/** The English words made German-looking (the stems): umlauts in about a third, ß in a tenth, "sh" as "sch". */
function germanStems(english: string[]): string[] {
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
const folded = (word: string) => word.normalize('NFD').replace(/[\u0300-\u036f]/g, '');

function distinctStems(vocabulary: string[], language: Language): number {
  return new Set(vocabulary.map((word) => language.stem(folded(word)))).size;
}

const percentile = (values: number[], share: number) => [...values].sort((a, b) => a - b)[Math.floor(share * (values.length - 1))] as number;

/** A corpus ingested through the CLI into a data folder of its own. */
interface Ingested {
  docsPerSecond: number;
  serve: () => Promise<Served>;
}

/** The service started on an ingested corpus. */
interface Served {
  url: string;
  key: string;
  stop: () => Promise<void>;
}

function ingest(file: string): Ingested {
  const work = mkdtempSync(join(tmpdir(), 'bench-languages-'));
  const env = {
    DATA_DIR: join(work, 'data'),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_S: '0',
    FACE_WORKERS: '0',
    SEED_DEMO: 'false',
    SEARCH_THREADS: '1',
  };
  const run = (args: string[]) =>
    execFileSync(process.execPath, [CLI, ...args, '--json'], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 20 });
  const ingested = JSON.parse(run(['ingest', file])) as { documentsPerSecond: number };
  const serve = async (): Promise<Served> => {
    const key = (JSON.parse(run(['keys', 'create', '--credits', '1000000000'])) as { key: string }).key;
    const service = await start([CLI, 'serve'], env, null);
    return {
      url: service.url,
      key,
      stop: async () => {
        await stop(service.child);
        rmSync(work, { recursive: true, force: true });
      },
    };
  };
  return { docsPerSecond: ingested.documentsPerSecond, serve };
}

/**
 * Each set's queries to its service, one at a time, alternated query by query across the sets
 * (so that the machine's drift falls on all alike), two passes, the second timed: p50 and p99 per set.
 */
function timeAlternated(sets: Array<{ served: Served; texts: string[]; language?: string }>): Array<{ p50: number; p99: number }> {
  const requests = (sets[0] as (typeof sets)[number]).texts.flatMap((_, index) =>
    sets.map(({ served, texts, language }) => ({
      method: 'POST',
      path: `${served.url}/query`,
      headers: { 'content-type': 'application/json', 'x-api-key': served.key },
      body: JSON.stringify({ query: texts[index], top_k: 10, ...(language ? { language } : {}) }),
    })),
  );
  const folder = mkdtempSync(join(tmpdir(), 'bench-languages-requests-'));
  try {
    const file = join(folder, 'requests.json');
    writeFileSync(file, JSON.stringify(requests));
    const latencies = JSON.parse(
      execFileSync(process.execPath, [join(ROOT, 'bench/sequential-client.mjs'), '', file, '2'], { encoding: 'utf8' }),
    ) as number[];
    return sets.map((_, set) => {
      const own = latencies.filter((_latency, index) => index % sets.length === set);
      return { p50: percentile(own, 0.5), p99: percentile(own, 0.99) };
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`\n${machineLine('bench:languages')}  ${SIZE.toLocaleString('en')} documents, ${ROUNDS} rounds`);
  const english = words();
  const stems = germanStems(english);
  const german = stems.map((stem, index) => stem + (WRITTEN_ENDINGS[(index * 7) % WRITTEN_ENDINGS.length] as string));
  console.log(
    `distinct stems of the 60,000 words: English ${distinctStems(english, ENGLISH).toLocaleString('en')}, German ${distinctStems(german, GERMAN).toLocaleString('en')}`,
  );
  const folder = mkdtempSync(join(tmpdir(), 'bench-languages-corpus-'));
  try {
    const files = { en: join(folder, 'en.jsonl'), de: join(folder, 'de.jsonl'), inflected: join(folder, 'de-inflected.jsonl') };
    await writeCorpus(files.en, SIZE, english);
    await writeCorpus(files.de, SIZE, german, { language: 'de' });
    await writeCorpus(files.inflected, SIZE, stems, { inflected, language: 'de' });
    const megabytes = (file: string) => `${(statSync(file).size / 1e6).toFixed(0)} MB`;
    console.log(`the corpora as JSON lines: English ${megabytes(files.en)}, German ${megabytes(files.de)}, inflected ${megabytes(files.inflected)}`);
    const englishQueries = queries(english, 3);
    // The same ranks as the English queries, as the documents write them; and each word's stem
    // with an ending of its own, for the corpus whose occurrences all have theirs.
    const germanQueries = queries(german, 3);
    const next = random(17);
    const inflectedQueries = queries(stems, 3).map((text) =>
      text
        .split(' ')
        .map((word) => inflected(word, next))
        .join(' '),
    );
    console.log('\n| round | corpus | docs/s | ratio to English | p50 ms | ratio to English | p99 ms |');
    console.log('|---|---|---:|---:|---:|---:|---:|');
    const ratios: Record<string, { ingest: number[]; p50: number[] }> = {};
    for (let round = 1; round <= ROUNDS; round++) {
      // Every ingest before any service starts, so that none shares the machine with a service
      // loading its indexes; each round starts with the next corpus, so that none always follows
      // another's writes still being flushed.
      const corpora = [files.en, files.de, files.inflected];
      const ingestedInTurn: Ingested[] = [];
      for (let turn = 0; turn < corpora.length; turn++) {
        const index = (round - 1 + turn) % corpora.length;
        ingestedInTurn[index] = ingest(corpora[index] as string);
      }
      const ingested = ingestedInTurn as [Ingested, Ingested, Ingested];
      const served = [await ingested[0].serve(), await ingested[1].serve(), await ingested[2].serve()] as const;
      const timed = timeAlternated([
        { served: served[0], texts: englishQueries },
        { served: served[1], texts: germanQueries, language: 'de' },
        { served: served[2], texts: inflectedQueries, language: 'de' },
      ]);
      for (const each of served) await each.stop();
      const figures = ingested.map((each, index) => ({ docsPerSecond: each.docsPerSecond, ...(timed[index] as { p50: number; p99: number }) }));
      const en = figures[0] as (typeof figures)[number];
      const rows = [
        ['English', en],
        ['German', figures[1]],
        ['German, every occurrence inflected', figures[2]],
      ] as const;
      for (const [name, figures] of rows) {
        ratios[name] ??= { ingest: [], p50: [] };
        ratios[name].ingest.push(figures.docsPerSecond / en.docsPerSecond);
        ratios[name].p50.push(figures.p50 / en.p50);
        console.log(
          `| ${round} | ${name} | ${figures.docsPerSecond.toLocaleString('en')} | ${(figures.docsPerSecond / en.docsPerSecond).toFixed(2)} | ` +
            `${figures.p50.toFixed(2)} | ${(figures.p50 / en.p50).toFixed(2)} | ${figures.p99.toFixed(2)} |`,
        );
      }
    }
    console.log('\nmedian ratio to English over the rounds:');
    for (const [name, { ingest, p50 }] of Object.entries(ratios))
      console.log(`- ${name}: ingest ${median(ingest).toFixed(2)}, p50 ${median(p50).toFixed(2)}`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
