// bench:features — phrases, operator and, exclusions, and a range filter with a sort over every
// match, this engine beside SQLite FTS5, in process on one thread, in one run. bench:search's
// synthetic corpus (FEATURES_SIZE documents, default 100,000); each engine builds its index, then
// answers the same queries, top 10 with exact totals; per query the median of FEATURES_PASSES runs
// (default 3), then p50 and p99 over the queries, and each query's totals checked to agree.
// FEATURES_QUERIES: queries per class (default 100); FEATURES_ONLY: the classes whose name holds one of its comma-separated parts.
// FEATURES_FROM_DISK=1: this engine is opened again once its index is written, and answers from the
// index read back (as after a restart), rather than from the one it built.
// - Phrases of 2 and 3 words taken from the documents' texts, of common words (ranks 1-100) and
//   of rarer ones: this engine's "a b", FTS5's {title text} : "a b".
// - 3 words with operator and; 2 words and a -word.
// - 1 common word, year in a range of about 10% of the documents, sorted by year descending:
//   this engine's sort, FTS5's MATCH joined to a table with an index on year, ORDER BY year DESC.
// - Prefixes are also timed beside Xapian's wildcard (OP_WILDCARD through its QueryParser, exact
//   totals), where python3-xapian is installed, alternated with the other two query by query.
// - Misspelt queries are also timed beside LanceDB's fuzzy match (fuzziness 1 on every word, its
//   top 10 by BM25; LanceDB counts no totals), alternated likewise.
//
//   npm run build && npm run bench:features
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { analyze } from '../src/search/analyzer.js';
import type { IndexQuery } from '../src/search/document-index.js';
import { ENGLISH, STOPWORDS } from '../src/search/engine/languages.js';
import { textClause } from '../src/search/query-dsl.js';
import { random } from '../test/support/random.js';
import { machineLine } from './lib.js';
import { buildLanceText, type LanceText, lanceMatch } from './peers/lancedb-text.js';
import { medianMs } from './peers/peer.js';
import { ThisEngine } from './peers/this-engine.js';
import { XapianPeer, xapianMissing } from './peers/xapian-peer.js';
import { words, writeCorpus } from './synthetic-corpus.js';

const SIZE = Number(process.env.FEATURES_SIZE ?? 100_000);
const PASSES = Number(process.env.FEATURES_PASSES ?? 3);
const QUERIES = Number(process.env.FEATURES_QUERIES ?? 100);
/** FEATURES_ONLY=rarer,and: the classes whose name holds one of these. */
const ONLY = process.env.FEATURES_ONLY?.split(',');
const FROM_DISK = process.env.FEATURES_FROM_DISK === '1';
const YEARS = { gte: 2010, lt: 2014 };

interface Query {
  text: string;
  operator?: 'and';
  range?: boolean;
  /** The baseline is this engine on this text (a misspelt query's words as written in the corpus), not FTS5. */
  exact?: string;
  /** Per word, its synonyms (as SearchService passes a set's single-word members). */
  synonyms?: Record<string, string[]>;
}

/** Phrases of `length` words as they occur in the texts: starting with a common word or with a rarer one. */
async function phrasesOf(path: string, vocabulary: string[], length: number, common: boolean): Promise<string[]> {
  const rank = new Map(vocabulary.map((word, index) => [word, index]));
  const next = random(length * (common ? 3 : 5));
  const found: string[] = [];
  for await (const line of createInterface({ input: createReadStream(path) })) {
    const text = (JSON.parse(line) as { text: string }).text.split(' ');
    const start = Math.floor(next() * (text.length - length));
    const phrase = text.slice(start, start + length);
    const isCommon = phrase.every((word) => (rank.get(word) ?? 0) < 100);
    const isRare = phrase.every((word) => (rank.get(word) ?? 0) >= 100);
    if ((common && isCommon) || (!common && isRare)) found.push(`"${phrase.join(' ')}"`);
    if (found.length === QUERIES) break;
  }
  return found;
}

function queryClasses(vocabulary: string[]): Record<string, (path: string) => Promise<Query[]>> {
  const next = random(99);
  const known = new Set([...vocabulary, ...vocabulary.map((word) => ENGLISH.stem(word))]);
  // Words long enough for a typo to be forgiven (5 characters and more).
  const long = vocabulary.filter((word) => word.length >= 5);
  const common = () => vocabulary[Math.floor(next() * 100)];
  const rarer = () => vocabulary[100 + Math.floor(next() * 20_000)];
  const rarerLong = () => long[100 + Math.floor(next() * 20_000)];
  const list = (make: () => Query) => async () => Array.from({ length: QUERIES }, make);
  return {
    'phrase, 2 common words': async (path) => (await phrasesOf(path, vocabulary, 2, true)).map((text) => ({ text })),
    'phrase, 2 rarer words': async (path) => (await phrasesOf(path, vocabulary, 2, false)).map((text) => ({ text })),
    'phrase, 3 common words': async (path) => (await phrasesOf(path, vocabulary, 3, true)).map((text) => ({ text })),
    'operator and, 3 words': list(() => ({ text: `${common()} ${rarer()} ${next() < 0.5 ? common() : rarer()}`, operator: 'and' })),
    '2 words and a -word': list(() => ({ text: `${common()} ${rarer()} -${common()}` })),
    'range (10%) + sort by year': list(() => ({ text: common(), range: true })),
    'prefix, 3 characters of a common word': list(() => ({ text: `${common().slice(0, 3)}*` })),
    '3 words, one with a 3-member synonym set (baseline: this engine, the members written)': list(() => {
      const [word, ...others] = [rarer(), rarer(), rarer()];
      const [second, third] = [common(), rarer()];
      return { text: `${word} ${second} ${third}`, synonyms: { [word]: others }, exact: `${word} ${others.join(' ')} ${second} ${third}` };
    }),
    '3 words, one misspelt by an edit (baseline: this engine, as spelt)': list(() => {
      const spelt = [common(), rarerLong(), next() < 0.5 ? common() : rarer()];
      return { text: [spelt[0], misspelt(spelt[1], known, next), spelt[2]].join(' '), exact: spelt.join(' ') };
    }),
  };
}

/** The word with one letter changed, into a word that is not in the vocabulary. */
function misspelt(word: string, known: ReadonlySet<string>, next: () => number): string {
  for (;;) {
    const at = 1 + Math.floor(next() * (word.length - 1));
    const typo = `${word.slice(0, at)}${'xqzjkvw'[Math.floor(next() * 7)]}${word.slice(at + 1)}`;
    if (!known.has(typo) && !known.has(ENGLISH.stem(typo))) return typo;
  }
}

class Fts5 {
  private readonly db: Database.Database;

  constructor(folder: string) {
    this.db = new Database(join(folder, 'fts5-features.sqlite'));
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
  }

  async build(path: string): Promise<void> {
    const { db } = this;
    db.exec(`CREATE VIRTUAL TABLE documents USING fts5(doc_id UNINDEXED, title, text, tokenize = 'porter unicode61 remove_diacritics 2', prefix = '3');
      CREATE TABLE meta (id INTEGER PRIMARY KEY, year INTEGER);`);
    const insert = db.prepare('INSERT INTO documents (rowid, doc_id, title, text) VALUES (?, ?, ?, ?)');
    const insertMeta = db.prepare('INSERT INTO meta (id, year) VALUES (?, ?)');
    const flush = db.transaction((rows: Array<{ doc_id: string; title: string; text: string; year: number }>, first: number) => {
      rows.forEach((row, offset) => {
        insert.run(first + offset, row.doc_id, row.title, row.text);
        insertMeta.run(first + offset, row.year);
      });
    });
    let batch: Array<{ doc_id: string; title: string; text: string; year: number }> = [];
    let rowid = 1;
    for await (const line of createInterface({ input: createReadStream(path) })) {
      batch.push(JSON.parse(line));
      if (batch.length === 10_000) {
        flush(batch, rowid);
        rowid += batch.length;
        batch = [];
      }
    }
    flush(batch, rowid);
    db.exec("INSERT INTO documents(documents) VALUES('optimize'); CREATE INDEX meta_year ON meta(year);");
  }

  /** FTS5's query syntax for the text: phrases in quotes, AND or OR between words, NOT for a -word. */
  private match(query: Query): string {
    const phrase = /^"(.*)"$/.exec(query.text);
    if (phrase) return `{title text} : "${phrase[1]}"`;
    if (query.text.endsWith('*')) return `{title text} : "${query.text.slice(0, -1)}"*`;
    const wanted = query.text.split(' ').filter((word) => !word.startsWith('-'));
    const left = query.text.split(' ').filter((word) => word.startsWith('-'));
    const words = `(${wanted.map((word) => `"${word}"`).join(query.operator === 'and' ? ' AND ' : ' OR ')})`;
    return `{title text} : ${words}${left.map((word) => ` NOT "${word.slice(1)}"`).join('')}`;
  }

  run(query: Query): number {
    const match = this.match(query);
    if (query.range) {
      this.db
        .prepare(
          'SELECT d.doc_id FROM documents d JOIN meta m ON m.id = d.rowid WHERE documents MATCH ? AND m.year >= ? AND m.year < ? ORDER BY m.year DESC, bm25(documents, 0, 2.0, 1.0) LIMIT 10',
        )
        .all(match, YEARS.gte, YEARS.lt);
      return this.db
        .prepare('SELECT count(*) FROM documents d JOIN meta m ON m.id = d.rowid WHERE documents MATCH ? AND m.year >= ? AND m.year < ?')
        .pluck()
        .get(match, YEARS.gte, YEARS.lt) as number;
    }
    this.db.prepare('SELECT doc_id FROM documents WHERE documents MATCH ? ORDER BY bm25(documents, 0, 2.0, 1.0) LIMIT 10').all(match);
    return this.db.prepare('SELECT count(*) FROM documents WHERE documents MATCH ?').pluck().get(match) as number;
  }

  close(): void {
    this.db.close();
  }
}

function indexQueryOf(query: Query): IndexQuery {
  // Phrases, exclusions and prefixes take the clause path, as in SearchService.
  const phrase = query.text.includes('"') || query.text.includes(' -') || query.text.endsWith('*');
  const base: IndexQuery = { terms: analyze(query.text), field: { kind: 'all' }, filters: [], topK: 10 };
  if (query.range) return { ...base, filters: [{ field: 'year', range: YEARS }], sort: [{ by: { kind: 'field', name: 'year' }, descending: true }] };
  if (query.operator) return { ...base, operator: 'and' };
  if (query.synonyms) return { ...base, synonyms: query.synonyms };
  if (phrase) return { ...base, terms: [], clause: textClause(query.text, { kind: 'all' }, 'or', ENGLISH) };
  return base;
}

const isPrefixClass = (name: string) => name.startsWith('prefix');
const isMisspeltClass = (name: string) => name.includes('misspelt');

/** Xapian, built over the corpus, when a prefix class is timed and python3-xapian is installed (else a line says why not). */
async function xapianForPrefixes(classes: Array<[string, Query[]]>, folder: string, path: string): Promise<XapianPeer | undefined> {
  if (!classes.some(([name]) => isPrefixClass(name))) return undefined;
  const missing = xapianMissing();
  if (missing) {
    console.error(`${missing}: prefixes are timed beside FTS5 alone`);
    return undefined;
  }
  const xapian = new XapianPeer(folder, [...STOPWORDS]);
  const built = await xapian.build(path, { id: 'doc_id', title: 'title', text: 'text' });
  console.error(`Xapian: ${built.documents} documents indexed in ${built.seconds.toFixed(0)} s`);
  return xapian;
}

/** LanceDB's FTS over the corpus, when a misspelt class is timed. */
async function lanceForTypos(classes: Array<[string, Query[]]>, folder: string, path: string): Promise<LanceText | undefined> {
  if (!classes.some(([name]) => isMisspeltClass(name))) return undefined;
  const built = await buildLanceText(path, folder);
  console.error(`LanceDB: ${built.documents} documents indexed in ${built.seconds.toFixed(0)} s`);
  return built;
}

function besideLine(name: string, count: number, mine: number[], theirs: number[], differing = 0): string {
  const [p50, p99] = [percentile(mine, 0.5), percentile(mine, 0.99)];
  const [their50, their99] = [percentile(theirs, 0.5), percentile(theirs, 0.99)];
  return `| ${name} (${count}) | ${p50.toFixed(3)} / ${p99.toFixed(3)} | ${their50.toFixed(2)} / ${their99.toFixed(2)} | **${(p50 / their50).toFixed(3)} / ${(p99 / their99).toFixed(3)}** |${differing ? ` totals differ on ${differing}` : ''}`;
}

const percentile = (values: number[], share: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(share * values.length))];

async function main(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-features-'));
  try {
    const vocabulary = words();
    const path = join(folder, 'corpus.jsonl');
    await writeCorpus(path, SIZE, vocabulary);
    console.error(`building both over ${SIZE} documents…`);
    const engine = new ThisEngine(join(folder, 'this'));
    await engine.build(path, { id: 'doc_id', title: 'title', text: 'text' });
    if (FROM_DISK) await engine.reopenFromDisk();
    const classes: Array<[string, Query[]]> = [];
    for (const [name, make] of Object.entries(queryClasses(vocabulary)).filter(([name]) => !ONLY || ONLY.some((part) => name.includes(part))))
      classes.push([name, await make(path)]);
    // FTS5 is built only when a class is timed beside it (at a million documents it takes most of the run).
    const fts5 = new Fts5(folder);
    if (classes.some(([, queries]) => queries.some((query) => query.exact === undefined))) await fts5.build(path);
    const xapian = await xapianForPrefixes(classes, folder, path);
    const lance = await lanceForTypos(classes, folder, path);
    const besideXapian: string[] = [];
    const besideLance: string[] = [];
    console.log(
      `\n| ${SIZE.toLocaleString('en')} documents${FROM_DISK ? ', this engine from its index on disk' : ''}, top 10, exact totals, ms | this p50 / p99 | FTS5 p50 / p99 | this / FTS5 p50 / p99 |`,
    );
    console.log('|---|---:|---:|---:|');
    for (const [name, queries] of classes) {
      const mine: number[] = [];
      const theirs: number[] = [];
      const xapians: number[] = [];
      const lances: number[] = [];
      let differing = 0;
      let xapianDiffering = 0;
      for (const query of queries) {
        // Alternated query by query, so that drift falls on both.
        const request = indexQueryOf(query);
        mine.push(await medianMs(() => engine.searchWith(request), PASSES));
        const exact = query.exact === undefined ? undefined : indexQueryOf({ text: query.exact });
        theirs.push(await medianMs(() => (exact ? engine.searchWith(exact) : fts5.run(query)), PASSES));
        if (xapian && isPrefixClass(name)) {
          const timed = await xapian.time([query.text], { k: 10, exactTotals: true, passes: PASSES });
          xapians.push(timed.ms[0]);
          if (timed.totals[0] !== (await engine.searchWith(request)).total) xapianDiffering++;
        }
        if (lance && isMisspeltClass(name)) lances.push(await medianMs(() => lanceMatch(lance.table, query.text, 10, 1), PASSES));
        if (exact) continue;
        const [ours, other] = [(await engine.searchWith(request)).total, fts5.run(query)];
        if (ours !== other) {
          if (differing === 0 && process.env.FEATURES_SHOW_DIFFERENCES) console.error(`${query.text}: ${ours} here, ${other} in FTS5`);
          differing++;
        }
      }
      console.log(besideLine(name, queries.length, mine, theirs, differing));
      if (xapians.length > 0) besideXapian.push(besideLine(name, queries.length, mine, xapians, xapianDiffering));
      if (lances.length > 0) besideLance.push(besideLine(name, queries.length, mine, lances));
    }
    if (besideXapian.length > 0) {
      console.log(`\n| beside Xapian's wildcard, ms | this p50 / p99 | Xapian p50 / p99 | this / Xapian p50 / p99 |\n|---|---:|---:|---:|`);
      for (const line of besideXapian) console.log(line);
    }
    if (besideLance.length > 0) {
      console.log(`\n| beside LanceDB's fuzzy match, ms | this p50 / p99 | LanceDB p50 / p99 | this / LanceDB p50 / p99 |\n|---|---:|---:|---:|`);
      for (const line of besideLance) console.log(line);
    }
    await xapian?.close();
    console.log(`\n${machineLine('bench:features')}`);
    await engine.close();
    fts5.close();
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
