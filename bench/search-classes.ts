// bench:search-classes — where a build's search time goes, by the kind of words in the query.
// Each of bench:search's query sets (1, 3 and 8 words) is searched in one process over a data
// folder (one index, no search threads), every query timed CLASSES_PASSES times (default 7; the
// median kept), and the queries grouped by their words' document frequencies: rare (in at most
// RARE_FRACTION of the documents, scored whole), dense (at least DENSE_FRACTION, a bitmap with
// block bounds) and between the two (commoner: sparse but not rare). Printed per group: queries,
// mean ms and share of the set's time.
//
//   DATA_DIR=/path/to/data npm run bench:search-classes
//
// DATA_DIR: a data folder with bench:search's corpus ingested (see bench/search-compare.ts).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { machineLine, median, openBuiltCorpus, ROOT } from './lib.js';
import { queries, words } from './synthetic-corpus.js';

const PASSES = Number(process.env.CLASSES_PASSES ?? 7);
const FIELD = { kind: 'all' };

async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR;
  if (!dataDir) {
    console.error('DATA_DIR=/path/to/data is required; see the head of bench/search-classes.ts');
    process.exit(2);
  }
  const module = (path: string) => import(pathToFileURL(join(ROOT, 'dist', path)).href);
  const { corpus: store, analyze } = await openBuiltCorpus(ROOT, dataDir, { searchThreads: 1 });
  const { DENSE_FRACTION } = await module('search/engine/postings.js');
  const { RARE_FRACTION } = await module('search/engine/text-index.js');
  await store.prepareSearch();
  const search = (text: string) => store.search({ terms: analyze(text), field: FIELD, filters: [], topK: 10 });
  try {
    console.log(`\n${machineLine('bench:search-classes')}`);
    const documents = await store.countDocuments();
    console.log(`data ${dataDir}: ${documents} documents; rare words in at most ${RARE_FRACTION} of them, dense in at least ${DENSE_FRACTION}`);
    const frequencies = new Map<string, number>();
    for (const terms of [1, 3, 8]) {
      const set = queries(words(), terms);
      for (const text of set) for (const word of text.split(' ')) if (!frequencies.has(word)) frequencies.set(word, (await search(word)).total);
      for (const text of set) await search(text);
      const times = set.map(() => [] as number[]);
      for (let pass = 0; pass < PASSES; pass++) {
        for (let index = 0; index < set.length; index++) {
          const started = performance.now();
          await search(set[index]);
          times[index].push(performance.now() - started);
        }
      }
      const groups = new Map<string, { queries: number; ms: number }>();
      let all = 0;
      set.forEach((text, index) => {
        const shares = [...new Set(text.split(' '))].map((word) => frequencies.get(word)! / documents);
        const rare = shares.filter((share) => share <= RARE_FRACTION).length;
        const dense = shares.filter((share) => share >= DENSE_FRACTION).length;
        const key = `${rare} rare, ${shares.length - rare - dense} commoner, ${dense} dense`;
        const group = groups.get(key) ?? { queries: 0, ms: 0 };
        const ms = median(times[index]);
        group.queries++;
        group.ms += ms;
        all += ms;
        groups.set(key, group);
      });
      console.log(`\n${terms} word${terms > 1 ? 's' : ''}: ${(all / set.length).toFixed(3)} ms a search on average\n`);
      console.log('| words | queries | ms a search | share of the time |\n|---|---:|---:|---:|');
      for (const [key, group] of [...groups].sort((a, b) => b[1].ms - a[1].ms)) {
        console.log(`| ${key} | ${group.queries} | ${(group.ms / group.queries).toFixed(3)} | ${((100 * group.ms) / all).toFixed(1)}% |`);
      }
    }
  } finally {
    await store.close();
  }
}

await main();
