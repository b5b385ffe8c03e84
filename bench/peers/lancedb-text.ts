// LanceDB's full-text search (its own inverted index, BM25) beside this engine: bench:features
// times its fuzzy match against a misspelt query, bench:semantic its hybrid search (FTS and vector
// search fused by its RRF reranker). One column holds title and text, analysed as this engine
// analyses English: lower case, folded, Porter-family stemming, stopwords removed.
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { LanceTable } from '../lancedb-vectors.js';

export interface LanceText {
  table: LanceTable;
  documents: number;
  /** Writing the rows and building the FTS index (and the vector index, where vectors are given). */
  seconds: number;
}

interface Row {
  doc_id: string;
  title: string;
  text: string;
}

/**
 * The JSON lines at `path` as a LanceDB table (`id`, `body`, and `vector` when `vectors.of` gives
 * each chunk's vectors), with an FTS index on `body` and, with vectors, an
 * IVF_HNSW_SQ index at the graph settings the service uses.
 */
export async function buildLanceText(path: string, dir: string, vectors?: { of: (rows: Row[]) => Promise<Float32Array[]> }): Promise<LanceText> {
  // On 2 cores, LanceDB 0.31's FTS build of 40,000 rows or more never returns with its CPU pool at
  // the core count (its default); with 4 threads it does.
  process.env.LANCE_CPU_THREADS ??= '4';
  const lancedb = await import('@lancedb/lancedb');
  const arrow = await import('apache-arrow');
  const db = await lancedb.connect(join(dir, 'lancedb-text'));
  const started = performance.now();
  let table: LanceTable | undefined;
  let documents = 0;
  const write = async (rows: Row[]) => {
    const vectorsOfRows = vectors ? await vectors.of(rows) : [];
    const records = rows.map((row, position) => ({
      id: row.doc_id,
      body: `${row.title} ${row.text}`,
      ...(vectors ? { vector: Array.from(vectorsOfRows[position]) } : {}),
    }));
    const data = lancedb.makeArrowTable(records, vectors ? { vectorColumns: { vector: { type: new arrow.Float32() } } } : {});
    if (table) await table.add(data);
    else table = await db.createTable('documents', data);
    documents += rows.length;
  };
  let batch: Row[] = [];
  for await (const line of createInterface({ input: createReadStream(path) })) {
    batch.push(JSON.parse(line) as Row);
    if (batch.length === 20_000) {
      await write(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await write(batch);
  if (!table) throw new Error('no documents');
  await table.createIndex('body', {
    config: lancedb.Index.fts({ withPosition: false, language: 'English', stem: true, removeStopWords: true, lowercase: true, asciiFolding: true }),
  });
  if (vectors) await table.createIndex('vector', { config: lancedb.Index.hnswSq({ distanceType: 'cosine', m: 16, efConstruction: 128 }) });
  return { table, documents, seconds: (performance.now() - started) / 1000 };
}

/** The best `k` ids of `text` by LanceDB's BM25, each word within `fuzziness` edits of an indexed one. */
export async function lanceMatch(table: LanceTable, text: string, k: number, fuzziness = 0): Promise<string[]> {
  const { MatchQuery } = await import('@lancedb/lancedb');
  const rows = await table
    .search(new MatchQuery(text, 'body', { fuzziness }))
    .select(['id'])
    .limit(k)
    .toArray();
  return rows.map((row) => String(row.id));
}

/** The best `k` ids of LanceDB's hybrid search: its FTS of `text` and its nearest of `vector`, fused by RRF. */
export async function lanceHybrid(
  table: LanceTable,
  text: string,
  vector: Float32Array,
  k: number,
  reranker: Awaited<ReturnType<typeof import('@lancedb/lancedb').rerankers.RRFReranker.create>>,
): Promise<string[]> {
  const rows = await table
    .query()
    .nearestTo(Array.from(vector))
    .distanceType('cosine')
    .fullTextSearch(text, { columns: ['body'] })
    .rerank(reranker)
    .select(['id'])
    .limit(k)
    .toArray();
  return rows.map((row) => String(row.id));
}
