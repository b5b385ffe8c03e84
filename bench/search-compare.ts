// bench:search-compare — this build's search against another build's, over one data folder, in one
// process. First every result of a comparison set must be identical (doc ids, totals and scores, to
// the last bit); then the searches are timed with the two builds alternated query by query (which
// one goes first alternates by pass), so the machine's drift falls on both alike. On the 2-core
// machines here the same build measured 0.61-0.80 ms per 3-word search at 1M within ten minutes, so
// runs one after another cannot tell a 10% change from noise; this can.
//
//   BASE=/path/to/other/checkout DATA_DIR=/path/to/data npm run bench:search-compare
//
// BASE: a checkout of the build to compare with, its `dist/` built and its dependencies installed
// (`git worktree add /tmp/base <commit>`, then `npm ci && npm run build` there, or link this
// checkout's node_modules). DATA_DIR: a data folder ingested by either build; without it, the
// synthetic corpus of bench:search (COMPARE_SIZE documents, default 100,000) is ingested into a
// scratch folder by this build's CLI; with COMPARE_OWN_INGEST=1, also into a second one by BASE's CLI,
// which BASE then opens (for a change to what is stored, which one build cannot read as the other
// wrote it). COMPARE_PASSES: timed passes over each query set (default 6; an odd number is rounded up).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BuiltCorpus, CLI, machineLine, openBuiltCorpus, ROOT } from './lib.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

interface Build {
  name: string;
  store: BuiltCorpus;
  analyze: (text: string) => string[];
}

const FIELDS = [{ kind: 'all' }, { kind: 'title' }, { kind: 'text' }];
const FILTERS = [[], [{ field: 'jurisdiction', anyOf: ['EU'] }]];

async function open(root: string, name: string, dataDir: string): Promise<Build> {
  const { corpus, analyze } = await openBuiltCorpus(root, dataDir);
  await corpus.prepareSearch();
  return { name, store: corpus, analyze };
}

/** Every result of 1-, 2-, 3- and 8-word searches in each field, filtered or not, top 10 and 100, as one line each. */
async function results(build: Build, vocabulary: string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const terms of [1, 2, 3, 8])
    for (const field of FIELDS)
      for (const filters of FILTERS)
        for (const topK of [10, 100])
          for (const text of queries(vocabulary, terms)) {
            const result = await build.store.search({ terms: build.analyze(text), field, filters, topK });
            lines.push(
              JSON.stringify([terms, field.kind, filters.length, topK, text, result.total, result.hits.map((hit) => [hit.docId, hit.score])]),
            );
          }
  return lines;
}

async function main(): Promise<void> {
  if (!process.env.BASE) {
    console.error('BASE=/path/to/other/checkout (with dist/ built) is required; see the head of bench/search-compare.ts');
    process.exit(2);
  }
  // Even, so that each build goes first as often as the other.
  const passes = 2 * Math.ceil(Number(process.env.COMPARE_PASSES ?? 6) / 2);
  const vocabulary = words();
  let scratch: string | undefined;
  let dataDir = process.env.DATA_DIR;
  let baseDataDir = dataDir;
  if (!dataDir) {
    scratch = mkdtempSync(join(tmpdir(), 'bench-compare-'));
    const file = join(scratch, 'corpus.jsonl');
    await writeCorpus(file, Number(process.env.COMPARE_SIZE ?? 100_000), vocabulary);
    const ingest = (cli: string, into: string) =>
      execFileSync(process.execPath, [cli, 'ingest', file], { env: { ...process.env, DATA_DIR: into, SEED_DEMO: 'false' }, stdio: 'ignore' });
    dataDir = baseDataDir = join(scratch, 'data');
    ingest(CLI, dataDir);
    if (process.env.COMPARE_OWN_INGEST === '1') {
      baseDataDir = join(scratch, 'base-data');
      ingest(join(resolve(process.env.BASE), 'dist/cli/main.js'), baseDataDir);
    }
  }
  try {
    const builds = [await open(resolve(process.env.BASE), 'base', baseDataDir as string), await open(ROOT, 'this', dataDir)];
    console.log(`\n${machineLine('bench:search-compare')}`);
    console.log(`base ${resolve(process.env.BASE)} against this checkout, data ${dataDir}\n`);

    const [expected, actual] = [await results(builds[0], vocabulary), await results(builds[1], vocabulary)];
    const differing = expected.flatMap((line, index) => (line === actual[index] ? [] : [index]));
    console.log(`results: ${expected.length - differing.length} of ${expected.length} identical (ids, totals, scores)`);
    if (differing.length > 0) {
      // A change to the ranking model moves scores; how far it moves the answers is what to judge.
      const answer = (line: string) => {
        const [, , , , , total, hits] = JSON.parse(line) as [unknown, unknown, unknown, unknown, unknown, number, Array<[string, number]>];
        return { total, ids: hits.map(([docId]) => docId) };
      };
      const pairs = differing.map((index) => [answer(expected[index]), answer(actual[index])] as const);
      const sameTotals = pairs.filter(([base, current]) => base.total === current.total).length;
      const sameIds = pairs.filter(([base, current]) => base.ids.join() === current.ids.join()).length;
      const sameSets = pairs.filter(([base, current]) => [...base.ids].sort().join() === [...current.ids].sort().join()).length;
      console.log(
        `of the ${differing.length} that differ: totals equal in ${sameTotals}, the same hits in the same order in ${sameIds}, the same hits in any order in ${sameSets}`,
      );
    }
    for (const index of differing.slice(0, 5)) console.log(`  base ${expected[index].slice(0, 300)}\n  this ${actual[index].slice(0, 300)}`);

    console.log(`\n| query | base ms per search | this ms per search | this / base |\n|---|---:|---:|---:|`);
    for (const terms of [1, 3, 8]) {
      const texts = queries(vocabulary, terms);
      const totals = [0, 0];
      // The first pass warms both builds and is not counted.
      for (let pass = 0; pass <= passes; pass++) {
        for (const text of texts) {
          for (const which of pass % 2 === 0 ? [0, 1] : [1, 0]) {
            const { store, analyze } = builds[which];
            const started = performance.now();
            await store.search({ terms: analyze(text), field: FIELDS[0], filters: [], topK: 10 });
            if (pass > 0) totals[which] += performance.now() - started;
          }
        }
      }
      const [base, current] = totals.map((total) => total / (passes * texts.length));
      console.log(`| ${terms} word${terms > 1 ? 's' : ''} | ${base!.toFixed(3)} | ${current!.toFixed(3)} | ${(current! / base!).toFixed(3)} |`);
    }
    for (const build of builds) await build.store.close();
    if (differing.length > 0) process.exitCode = 1;
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
