// bench:highlights — what highlights add to a search of the top 10, beside what SQLite FTS5's
// snippet() and highlight() add to its own, on bench:search's synthetic corpus (HIGHLIGHTS_SIZE
// documents, default 100,000). Each engine answers the same 200 3-word queries, in process, one
// thread, top 10: without highlights and with them (the title whole, a snippet of the text), each
// query's median of 5 runs, the two forms alternated query by query. The figure is each engine's
// added cost (with - without) at p50 over the queries, and this engine's over FTS5's.
//
//   npm run bench:highlights
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { INDEX_UPKEEP } from '../src/corpus/index-keeper.js';
import { SqliteCorpus } from '../src/corpus/sqlite-corpus.js';
import { readDocuments } from '../src/documents/ingest.js';
import { analyze } from '../src/search/analyzer.js';
import { DEFAULT_HIGHLIGHT } from '../src/search/highlight.js';
import { SearchService } from '../src/search/search-service.js';
import { machineLine, median } from './lib.js';
import { Fts5Peer } from './peers/fts5-peer.js';
import { medianMs } from './peers/peer.js';
import { queries, words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.HIGHLIGHTS_SIZE ?? 100_000);
const PASSES = 5;

function p50(values: number[]): number {
  return median([...values].sort((a, b) => a - b));
}

async function main(): Promise<void> {
  console.log(machineLine('bench:highlights'));
  const scratch = mkdtempSync(join(tmpdir(), 'bench-highlights-'));
  try {
    const path = join(scratch, 'corpus.jsonl');
    const vocabulary = words();
    await writeCorpus(path, SIZE, vocabulary);
    const corpus = new SqliteCorpus(scratch, { ...INDEX_UPKEEP, searchThreads: 1 });
    await corpus.ingestDocuments(await readDocuments(path));
    await corpus.prepareSearch();
    const search = new SearchService(corpus, corpus);
    const fts5 = new Fts5Peer(scratch, analyze);
    await fts5.build(path, { id: 'doc_id', title: 'title', text: 'text' });
    const db = new Database(join(scratch, 'fts5.sqlite'), { readonly: true });
    const plain = db.prepare('SELECT doc_id, title FROM documents WHERE documents MATCH ? ORDER BY bm25(documents, 0, 2.0, 1.0) LIMIT 10');
    const marked = db.prepare(
      `SELECT doc_id, highlight(documents, 1, '<mark>', '</mark>') AS title, snippet(documents, 2, '<mark>', '</mark>', '…', 24) AS text
       FROM documents WHERE documents MATCH ? ORDER BY bm25(documents, 0, 2.0, 1.0) LIMIT 10`,
    );
    const match = (text: string) =>
      `{title text} : (${analyze(text)
        .map((term) => `"${term}"`)
        .join(' OR ')})`;
    const request = (text: string) => ({ mode: 'lexical' as const, text, field: { kind: 'all' as const }, filters: {}, topK: 10, offset: 0 });

    const added = { ours: [] as number[], fts5: [] as number[] };
    const base = { ours: [] as number[], fts5: [] as number[] };
    for (const text of queries(vocabulary, 3)) {
      const ours = await medianMs(() => search.search(request(text)), PASSES);
      const oursMarked = await medianMs(() => search.search({ ...request(text), highlight: DEFAULT_HIGHLIGHT }), PASSES);
      const theirs = await medianMs(() => plain.all(match(text)), PASSES);
      const theirsMarked = await medianMs(() => marked.all(match(text)), PASSES);
      base.ours.push(ours);
      base.fts5.push(theirs);
      added.ours.push(oursMarked - ours);
      added.fts5.push(theirsMarked - theirs);
    }
    db.close();
    await fts5.close();
    await corpus.close();
    console.log(`\n${SIZE.toLocaleString('en')} documents, 200 3-word queries, top 10, p50 over the queries (each the median of ${PASSES} runs)\n`);
    console.log('| engine | search, ms | added by highlights, ms |\n|---|---:|---:|');
    console.log(`| metered-search | ${p50(base.ours).toFixed(3)} | ${p50(added.ours).toFixed(3)} |`);
    console.log(`| SQLite FTS5 (snippet, highlight) | ${p50(base.fts5).toFixed(3)} | ${p50(added.fts5).toFixed(3)} |`);
    console.log(`\nthis engine's added cost / FTS5's: ${(p50(added.ours) / p50(added.fts5)).toFixed(2)} (target <= 0.5)`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
