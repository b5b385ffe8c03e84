// bench:peers — this engine beside the engines a user would otherwise pick, on one machine in one
// run: SQLite FTS5 (bm25() with the same field weights) and Xapian (BM25, English stemmer; Debian's
// python3-xapian, skipped with the reason when it is not installed). Each builds an index of
// bench:search's synthetic corpus (PEERS_SIZE documents, default 1,000,000) and answers the same 200
// queries of 1, 3 and 8 words, in process and on one thread, top 10: per query the median of
// PEERS_PASSES runs (default 3), then p50 and p99 over the queries, with exact totals and without;
// then the 3-word queries again with two facets counted over every match (this engine's facets,
// Xapian's ValueCountMatchSpy, FTS5's GROUP BY over the MATCH), the counts checked to agree.
// PEERS_ONLY=facets: the builds and the facets alone.
// Then each indexes BEIR SciFact and ranks its test queries: nDCG@10. Printed as ratios to the
// best peer: time and bytes this / best (lower is better), documents/s and nDCG this / best.
//
//   npm run build && npm run bench:peers
//
// PEERS_CORPUS: an already written corpus file (bench:search's format) to use instead of writing one.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyze } from '../src/search/analyzer.js';
import { STOPWORDS } from '../src/search/engine/languages.js';
import { machineLine } from './lib.js';
import { Fts5Peer } from './peers/fts5-peer.js';
import type { BuildFigures, FacetCounts, Peer } from './peers/peer.js';
import { ThisEngine } from './peers/this-engine.js';
import { XapianPeer, xapianMissing, xapianVersion } from './peers/xapian-peer.js';
import { DATASET, judgments, scifactQueries, score } from './scifact.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.PEERS_SIZE ?? 1_000_000);
const PASSES = Number(process.env.PEERS_PASSES ?? 3);
/** PEERS_ONLY=facets: the builds and the facet counts alone, without the query classes and SciFact. */
const FACETS_ONLY = process.env.PEERS_ONLY === 'facets';
const CLASSES = [1, 3, 8];
const FACETS = ['jurisdiction', 'category'];
const SYNTHETIC_FIELDS = { id: 'doc_id', title: 'title', text: 'text', facets: FACETS };
const SCIFACT_FIELDS = { id: '_id', title: 'title', text: 'text' };

interface Timing {
  p50: number;
  p99: number;
}

function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
}

function openPeers(folder: string): { peers: Peer[]; skipped: string[] } {
  const skipped: string[] = [];
  const peers: Peer[] = [new ThisEngine(join(folder, 'this')), new Fts5Peer(folder, analyze)];
  const missing = xapianMissing();
  if (missing) skipped.push(missing);
  else peers.push(new XapianPeer(folder, [...STOPWORDS]));
  return { peers, skipped };
}

const ratio = (mine: number, best: number) => (best > 0 ? (mine / best).toFixed(2) : '-');
const mib = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / 2 ** 20).toFixed(0));

async function speed(peers: Peer[], corpusPath: string) {
  const builds = new Map<Peer, BuildFigures>();
  for (const peer of peers) {
    console.error(`building ${peer.name} over ${SIZE} documents…`);
    builds.set(peer, await peer.build(corpusPath, SYNTHETIC_FIELDS));
  }
  const timings = new Map<string, Timing>();
  const totalsDiffer: string[] = [];
  for (const terms of FACETS_ONLY ? [] : CLASSES) {
    const set = queries(words(), terms);
    for (const exactTotals of [true, false]) {
      // Peers one after another, per class and mode, so that drift spreads over all of them.
      const exact: Record<string, number[]> = {};
      for (const peer of peers) {
        const { ms, totals } = await peer.time(set, { k: 10, exactTotals, passes: PASSES });
        timings.set(`${peer.name} ${terms} ${exactTotals}`, { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99) });
        if (exactTotals) exact[peer.name] = totals;
      }
      if (exactTotals) {
        const [first, ...others] = Object.entries(exact);
        for (const [name, totals] of others) {
          const differing = totals.filter((total, index) => total !== first[1][index]).length;
          if (differing > 0) totalsDiffer.push(`${terms} words: ${name} differs from ${first[0]} on ${differing} of ${totals.length} totals`);
        }
      }
    }
  }
  // Top 10 and two facets counted over every match, 3-word queries: each peer in turn.
  const facetTimings = new Map<string, Timing>();
  const facetsDiffer: string[] = [];
  const facetSet = queries(words(), 3);
  let reference: { name: string; counts: FacetCounts[] } | undefined;
  for (const peer of peers) {
    const { ms, counts } = await peer.facets(facetSet, { k: 10, fields: FACETS, passes: PASSES });
    facetTimings.set(peer.name, { p50: percentile(ms, 0.5), p99: percentile(ms, 0.99) });
    if (!reference) reference = { name: peer.name, counts };
    else {
      const differing = counts.filter((count, index) => !sameCounts(count, reference!.counts[index])).length;
      if (differing > 0) facetsDiffer.push(`${peer.name} differs from ${reference.name} on ${differing} of ${counts.length} queries' facet counts`);
    }
  }
  return { builds, timings, totalsDiffer, facetTimings, facetsDiffer };
}

/** The same values with the same counts, whatever the order (a value no match holds counts as absent). */
function sameCounts(a: FacetCounts, b: FacetCounts | undefined): boolean {
  const flat = (counts: FacetCounts | undefined) =>
    Object.entries(counts ?? {})
      .flatMap(([field, values]) =>
        Object.entries(values)
          .filter(([, n]) => n > 0)
          .map(([value, n]) => `${field}=${value}:${n}`),
      )
      .sort()
      .join('|');
  return flat(a) === flat(b);
}

async function relevance(folder: string): Promise<Map<string, number>> {
  const { peers } = openPeers(folder);
  const relevant = judgments();
  const asked = scifactQueries();
  const ndcg = new Map<string, number>();
  try {
    for (const peer of peers) {
      await peer.build(join(DATASET, 'corpus.jsonl'), SCIFACT_FIELDS);
      const rankings = await peer.rank(
        asked.map((query) => query.text),
        10,
      );
      ndcg.set(peer.name, score(new Map(asked.map((query, index) => [query.id, rankings[index]])), relevant).ndcg10);
    }
  } finally {
    for (const peer of peers) await peer.close();
  }
  return ndcg;
}

function report(peers: Peer[], results: Awaited<ReturnType<typeof speed>>, ndcg: Map<string, number>): void {
  const [mine, ...others] = peers;
  const { builds, timings } = results;
  for (const exactTotals of FACETS_ONLY ? [] : [true, false]) {
    console.log(`\nQueries, top 10, ${exactTotals ? 'with exact totals' : 'without exact totals (this engine still counts them)'}: ms per query`);
    console.log(`| engine | ${CLASSES.map((terms) => `${terms} word${terms > 1 ? 's' : ''} p50 / p99`).join(' | ')} |`);
    console.log(`|---|${CLASSES.map(() => '---:').join('|')}|`);
    for (const peer of peers) {
      const cells = CLASSES.map((terms) => {
        const timing = timings.get(`${peer.name} ${terms} ${exactTotals}`)!;
        return `${timing.p50.toFixed(3)} / ${timing.p99.toFixed(3)}`;
      });
      console.log(`| ${peer.name} | ${cells.join(' | ')} |`);
    }
    const ratios = CLASSES.map((terms) => {
      const best = (field: 'p50' | 'p99') => Math.min(...others.map((peer) => timings.get(`${peer.name} ${terms} ${exactTotals}`)![field]));
      const own = timings.get(`${mine.name} ${terms} ${exactTotals}`)!;
      return `${ratio(own.p50, best('p50'))} / ${ratio(own.p99, best('p99'))}`;
    });
    console.log(`| **this / best peer** (target <= 0.5) | ${ratios.join(' | ')} |`);
  }
  console.log(`\nTop 10 and two facets (${FACETS.join(', ')}) counted over every match, 3-word queries: ms per query`);
  console.log('| engine | p50 / p99 |');
  console.log('|---|---:|');
  for (const peer of peers) {
    const timing = results.facetTimings.get(peer.name)!;
    console.log(`| ${peer.name} | ${timing.p50.toFixed(3)} / ${timing.p99.toFixed(3)} |`);
  }
  const ownFacets = results.facetTimings.get(mine.name)!;
  const bestFacets = (field: 'p50' | 'p99') => Math.min(...others.map((peer) => results.facetTimings.get(peer.name)![field]));
  console.log(`| **this / best peer** (target <= 0.5) | ${ratio(ownFacets.p50, bestFacets('p50'))} / ${ratio(ownFacets.p99, bestFacets('p99'))} |`);
  for (const line of results.facetsDiffer) console.log(`note: facets: ${line}`);
  console.log('\nBuild, size and relevance');
  console.log('| engine | documents/s | index on disk MiB | index in memory MiB | load on start s | SciFact nDCG@10 |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const peer of peers) {
    const build = builds.get(peer)!;
    const load = build.loadSeconds === undefined ? '-' : build.loadSeconds.toFixed(1);
    console.log(
      `| ${peer.name} | ${(build.documents / build.seconds).toFixed(0)} | ${mib(build.bytes)} | ${mib(build.memoryBytes)} | ${load} | ${ndcg.has(peer.name) ? (ndcg.get(peer.name) as number).toFixed(4) : '-'} |`,
    );
  }
  const own = builds.get(mine)!;
  const bestRate = Math.max(...others.map((peer) => builds.get(peer)!.documents / builds.get(peer)!.seconds));
  const bestBytes = Math.min(...others.map((peer) => builds.get(peer)!.bytes));
  const bestNdcg = Math.max(...others.map((peer) => ndcg.get(peer.name) ?? 0));
  console.log(
    `| **this / best peer** | ${ratio(own.documents / own.seconds, bestRate)} (target >= 1) | ${ratio(own.bytes, bestBytes)} | | | ${ratio(ndcg.get(mine.name) ?? 0, bestNdcg)} (target >= 1) |`,
  );
  for (const line of results.totalsDiffer) console.log(`note: exact totals: ${line}`);
}

async function main(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-peers-'));
  const { peers, skipped } = openPeers(folder);
  try {
    const corpusPath = process.env.PEERS_CORPUS ?? join(folder, 'corpus.jsonl');
    if (!process.env.PEERS_CORPUS) await writeCorpus(corpusPath, SIZE, words());
    else if (!existsSync(corpusPath)) throw new Error(`PEERS_CORPUS ${corpusPath} does not exist`);
    const results = await speed(peers, corpusPath);
    for (const peer of peers) await peer.close();
    const ndcg = FACETS_ONLY ? new Map<string, number>() : await relevance(mkdtempSync(join(folder, 'scifact-')));
    console.log(`\n${machineLine('bench:peers')}`);
    const versions = [`better-sqlite3's SQLite FTS5`, skipped.length === 0 ? `Xapian ${xapianVersion()}` : undefined].filter(Boolean);
    console.log(`${SIZE} synthetic documents; 200 queries per class, each the median of ${PASSES} runs; one thread; ${versions.join(', ')}`);
    for (const reason of skipped) console.log(`SKIPPED: ${reason}`);
    report(peers, results, ndcg);
  } finally {
    for (const peer of peers) await peer.close().catch(() => undefined);
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
