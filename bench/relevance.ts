// bench:relevance — ranking quality on BEIR SciFact, end to end: the corpus ingested with the CLI,
// every test query asked through POST /query over HTTP with top_k 100, the rankings scored against
// the judgments. Runs on the embedded store and, when a PostgreSQL server is reachable
// (BENCH_DATABASE_URL, else TEST_DATABASE_URL), on PostgreSQL too, whose ranking must stay within
// 0.01 of the embedded figure. A plain BM25 (SQLite FTS5's bm25() with equal field weights, same
// analysed query) is measured on the same corpus in the same run for comparison.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { request } from 'undici';
import { analyze } from '../src/search/analyzer.js';
import { CLI, machineLine, start, stop } from './lib.js';
import { DATASET, judgments, type Query, readJsonLines, type Scores, scifactQueries, score } from './scifact.js';

const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

async function rankOverHttp(env: Record<string, string>, queries: Query[]): Promise<Map<string, string[]>> {
  const cli = (...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  cli('ingest', join(DATASET, 'corpus.jsonl'));
  const key = (JSON.parse(cli('keys', 'create', '--credits', String(queries.length * 2), '--json')) as { key: string }).key;
  const server = await start(
    [CLI, 'serve'],
    { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_S: '0', FACE_WORKERS: '0', SEED_DEMO: 'false' },
    null,
  );
  const rankings = new Map<string, string[]>();
  try {
    for (const query of queries) {
      const response = await request(`${server.url}/query`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ query: query.text, top_k: 100 }),
      });
      const body = (await response.body.json()) as { resp: { body: { hits: { documents: Array<{ doc_id: string }> } } } };
      if (response.statusCode !== 200) throw new Error(`query ${query.id}: HTTP ${response.statusCode}`);
      rankings.set(
        query.id,
        body.resp.body.hits.documents.map((document) => document.doc_id),
      );
    }
  } finally {
    await stop(server.child);
  }
  return rankings;
}

/**
 * Plain BM25 for comparison: SQLite FTS5's bm25() (k1 1.2, b 0.75, equal field weights) with the
 * Porter tokenizer, on the same corpus indexed apart in memory, asked the same analysed terms.
 */
function rankPlainBm25(queries: Query[]): Map<string, string[]> {
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE documents USING fts5(doc_id UNINDEXED, title, text, tokenize = 'porter unicode61 remove_diacritics 2')`);
  const insert = db.prepare('INSERT INTO documents (doc_id, title, text) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (const document of readJsonLines<{ _id: string; title: string; text: string }>(join(DATASET, 'corpus.jsonl'))) {
      insert.run(document._id, document.title, document.text);
    }
  })();
  const statement = db.prepare('SELECT doc_id FROM documents WHERE documents MATCH ? ORDER BY bm25(documents) LIMIT 100');
  const rankings = new Map<string, string[]>();
  for (const query of queries) {
    const terms = analyze(query.text);
    const match = terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ');
    rankings.set(query.id, terms.length === 0 ? [] : (statement.pluck().all(`{title text} : (${match})`) as string[]));
  }
  db.close();
  return rankings;
}

function row(name: string, scores: Scores): string {
  return `| ${name} | ${scores.ndcg10.toFixed(4)} | ${scores.recall100.toFixed(4)} | ${scores.mrr10.toFixed(4)} |`;
}

async function main(): Promise<void> {
  if (!existsSync(join(DATASET, 'corpus.jsonl'))) throw new Error(`SciFact not found in ${DATASET} (set SCIFACT_DIR)`);
  const queries = scifactQueries();
  const relevant = judgments();
  const work = mkdtempSync(join(tmpdir(), 'bench-relevance-'));
  const lines: string[] = [];
  try {
    const dataDir = join(work, 'data');
    const embedded = score(await rankOverHttp({ DATA_DIR: dataDir }, queries), relevant);
    lines.push(row('plain BM25 (SQLite FTS5 bm25(), Porter, equal field weights)', score(rankPlainBm25(queries), relevant)));
    lines.push(row('metered-search, embedded SQLite, POST /query over HTTP', embedded));
    if (DATABASE_URL) {
      const name = `metered_search_relevance_${randomBytes(4).toString('hex')}`;
      const admin = async (sql: string) => {
        const client = new pg.Client({ connectionString: DATABASE_URL });
        await client.connect();
        await client.query(sql).finally(() => client.end());
      };
      await admin(`CREATE DATABASE ${name}`);
      try {
        const url = new URL(DATABASE_URL);
        url.pathname = `/${name}`;
        const postgres = score(await rankOverHttp({ DATABASE_URL: url.toString() }, queries), relevant);
        const gap = Math.abs(postgres.ndcg10 - embedded.ndcg10);
        const verdict = `nDCG@10 gap to embedded ${gap.toFixed(4)}, ${gap <= 0.01 ? 'within 0.01' : 'OVER 0.01'}`;
        lines.push(row(`metered-search, PostgreSQL, POST /query over HTTP (${verdict})`, postgres));
      } finally {
        await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    } else {
      lines.push('(PostgreSQL not measured: set BENCH_DATABASE_URL or TEST_DATABASE_URL)');
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`\n${machineLine('bench:relevance')}`);
  console.log(`BEIR SciFact test split: ${queries.length} queries, ${relevant.size} judged; top_k 100\n`);
  console.log('| ranking | nDCG@10 | Recall@100 | MRR@10 |');
  console.log('|---|---:|---:|---:|');
  for (const line of lines) console.log(line);
}

await main();
