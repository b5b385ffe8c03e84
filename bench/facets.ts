// bench:facets — what counting facets costs a search. The query sets of bench:search (200 queries
// each of 1, 3 and 8 words) are searched in one process over a data folder, as the service searches
// (the index split over its search threads), SEARCH_CONCURRENCY searches in flight; each set with
// two facets (jurisdiction: 12 values, category: 20) and without, alternated round by round
// (FACET_ROUNDS, default 4) so that the machine's drift falls on both alike. Printed: searches per
// second with and without, and their ratio.
//
//   DATA_DIR=/path/to/data npm run bench:facets
//
// DATA_DIR: a data folder with bench:search's corpus ingested (see bench/search-compare.ts).
import { machineLine, median, openBuiltCorpus, ROOT } from './lib.js';
import { queries, words } from './synthetic-corpus.js';

const ROUNDS = Number(process.env.FACET_ROUNDS ?? 4);
const CONCURRENCY = Number(process.env.SEARCH_CONCURRENCY ?? 8);
const FACETS = { fields: ['jurisdiction', 'category'], limit: 10 };

type Search = (text: string) => Promise<unknown>;

/** Searches per second over the whole set, CONCURRENCY at a time. */
async function throughput(set: string[], search: Search): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < set.length) await search(set[next++]);
    }),
  );
  return set.length / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR;
  if (!dataDir) {
    console.error('DATA_DIR=/path/to/data is required; see the head of bench/facets.ts');
    process.exit(2);
  }
  const { corpus, analyze } = await openBuiltCorpus(ROOT, dataDir);
  await corpus.prepareSearch();
  const request = (text: string) => ({ terms: analyze(text), field: { kind: 'all' }, filters: [], topK: 10 });
  const plain: Search = (text) => corpus.search(request(text));
  const faceted: Search = (text) => corpus.search({ ...request(text), facets: FACETS });
  try {
    console.log(`\n${machineLine('bench:facets')}`);
    console.log(`data ${dataDir}: ${await corpus.countDocuments()} documents; ${CONCURRENCY} searches in flight, ${ROUNDS} rounds`);
    console.log('| query | without facets searches/s | with 2 facets searches/s | with / without |');
    console.log('|---|---:|---:|---:|');
    for (const terms of [1, 3, 8]) {
      const set = queries(words(), terms);
      await throughput(set, plain);
      await throughput(set, faceted);
      const without: number[] = [];
      const withFacets: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // Which goes first alternates, so neither always runs on a warmer or cooler machine.
        const order: Array<[Search, number[]]> =
          round % 2 === 0
            ? [
                [plain, without],
                [faceted, withFacets],
              ]
            : [
                [faceted, withFacets],
                [plain, without],
              ];
        for (const [search, results] of order) results.push(await throughput(set, search));
      }
      const [a, b] = [median(without), median(withFacets)];
      console.log(`| ${terms} word${terms > 1 ? 's' : ''} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)} |`);
    }
  } finally {
    await corpus.close();
  }
}

await main();
