import { createReadStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { type BuildFigures, type FacetCounts, type Fields, medianMs, type Peer } from './peer.js';

/**
 * SQLite FTS5 (better-sqlite3): Porter over unicode61, bm25() with title words weighing twice text
 * words, as this engine's BM25F does; asked the same analysed terms, OR'ed. Exact totals are a
 * count(*) of the same MATCH.
 */
export class Fts5Peer implements Peer {
  readonly name = 'SQLite FTS5';
  private db: Database.Database | undefined;
  private facetFields: string[] = [];

  constructor(
    private readonly folder: string,
    private readonly analyze: (text: string) => string[],
  ) {}

  async build(path: string, fields: Fields): Promise<BuildFigures> {
    const file = join(this.folder, 'fts5.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    // Facet fields ride along unindexed, as a search-then-GROUP BY would read them.
    const facets = fields.facets ?? [];
    this.facetFields = facets;
    const facetColumns = facets.map((field) => `, ${field} UNINDEXED`).join('');
    db.exec(
      `CREATE VIRTUAL TABLE documents USING fts5(doc_id UNINDEXED, title, text${facetColumns}, tokenize = 'porter unicode61 remove_diacritics 2')`,
    );
    const insert = db.prepare(
      `INSERT INTO documents (doc_id, title, text${facets.map((field) => `, ${field}`).join('')}) VALUES (?, ?, ?${facets.map(() => ', ?').join('')})`,
    );
    const started = performance.now();
    let documents = 0;
    let batch: unknown[][] = [];
    const flush = db.transaction((rows: unknown[][]) => {
      for (const row of rows) insert.run(...row);
    });
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY })) {
      if (!line) continue;
      const record = JSON.parse(line) as Record<string, string>;
      batch.push([String(record[fields.id]), record[fields.title] ?? '', record[fields.text] ?? '', ...facets.map((field) => record[field] ?? null)]);
      if (batch.length === 10_000) {
        flush(batch);
        documents += batch.length;
        batch = [];
      }
    }
    flush(batch);
    documents += batch.length;
    db.exec("INSERT INTO documents(documents) VALUES('optimize')");
    const seconds = (performance.now() - started) / 1000;
    this.db = db;
    return { documents, seconds, bytes: statSync(file).size };
  }

  private match(text: string): string | undefined {
    const terms = this.analyze(text);
    return terms.length === 0 ? undefined : `{title text} : (${terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ')})`;
  }

  async time(queries: string[], options: { k: number; exactTotals: boolean; passes: number }) {
    const db = this.db!;
    const top = db.prepare('SELECT doc_id FROM documents WHERE documents MATCH ? ORDER BY bm25(documents, 0, 2.0, 1.0) LIMIT ?').pluck();
    const count = db.prepare('SELECT count(*) FROM documents WHERE documents MATCH ?').pluck();
    const ms: number[] = [];
    const totals: number[] = [];
    for (const text of queries) {
      const match = this.match(text);
      let total = 0;
      ms.push(
        await medianMs(() => {
          if (!match) return;
          top.all(match, options.k);
          if (options.exactTotals) total = count.get(match) as number;
        }, options.passes),
      );
      totals.push(total);
    }
    return { ms, totals };
  }

  async rank(queries: string[], k: number): Promise<string[][]> {
    const top = this.db!.prepare('SELECT doc_id FROM documents WHERE documents MATCH ? ORDER BY bm25(documents, 0, 2.0, 1.0) LIMIT ?').pluck();
    return queries.map((text) => {
      const match = this.match(text);
      return match ? (top.all(match, k) as string[]) : [];
    });
  }

  async facets(queries: string[], options: { k: number; fields: string[]; passes: number }) {
    const db = this.db!;
    const top = db.prepare('SELECT doc_id FROM documents WHERE documents MATCH ? ORDER BY bm25(documents, 0, 2.0, 1.0) LIMIT ?').pluck();
    const groups = options.fields.map((field) => {
      if (!this.facetFields.includes(field)) throw new Error(`${field} was not kept at build`);
      return { field, count: db.prepare(`SELECT ${field} AS value, count(*) AS n FROM documents WHERE documents MATCH ? GROUP BY ${field}`) };
    });
    const ms: number[] = [];
    const counts: FacetCounts[] = [];
    for (const text of queries) {
      const match = this.match(text);
      let counted: FacetCounts = {};
      ms.push(
        await medianMs(() => {
          counted = {};
          if (!match) return;
          top.all(match, options.k);
          for (const { field, count } of groups) {
            const rows = count.all(match) as Array<{ value: string | null; n: number }>;
            counted[field] = Object.fromEntries(rows.filter((row) => row.value !== null).map((row) => [String(row.value), row.n]));
          }
        }, options.passes),
      );
      counts.push(counted);
    }
    return { ms, counts };
  }

  async close(): Promise<void> {
    this.db?.close();
  }
}
