// LanceDB beside the service's vector index (bench:vectors, bench:vector-build): the same vectors
// written to a LanceDB table and indexed with IVF_HNSW_SQ at the graph settings the service uses.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export type LanceTable = Awaited<ReturnType<Awaited<ReturnType<typeof import('@lancedb/lancedb').connect>>['createTable']>>;

export interface LanceBuild {
  table: LanceTable;
  seconds: number;
  rssGrowthMb: number;
  diskMb: number;
}

const rssMb = () => process.memoryUsage().rss / 2 ** 20;

function folderBytes(path: string): number {
  return readdirSync(path, { withFileTypes: true }).reduce(
    (sum, entry) => sum + (entry.isDirectory() ? folderBytes(join(path, entry.name)) : statSync(join(path, entry.name)).size),
    0,
  );
}

/** `vectors` (`dimensions` each, row ids from 0) written in chunks and indexed: M 16, ef_construction 128, cosine. */
export async function buildLanceDb(vectors: Float32Array, dimensions: number, dir: string): Promise<LanceBuild> {
  const lancedb = await import('@lancedb/lancedb');
  const arrow = await import('apache-arrow');
  const db = await lancedb.connect(join(dir, 'lancedb'));
  const size = vectors.length / dimensions;
  const before = rssMb();
  const started = performance.now();
  const CHUNK = 50_000;
  let table: LanceTable | undefined;
  for (let from = 0; from < size; from += CHUNK) {
    const count = Math.min(CHUNK, size - from);
    const rows = Array.from({ length: count }, (_, i) => ({
      id: from + i,
      vector: Array.from(vectors.subarray((from + i) * dimensions, (from + i + 1) * dimensions)),
    }));
    const data = lancedb.makeArrowTable(rows, { vectorColumns: { vector: { type: new arrow.Float32() } } });
    if (table) await table.add(data);
    else table = await db.createTable('vectors', data);
  }
  if (!table) throw new Error('no vectors');
  await table.createIndex('vector', { config: lancedb.Index.hnswSq({ distanceType: 'cosine', m: 16, efConstruction: 128 }) });
  const seconds = (performance.now() - started) / 1000;
  return { table, seconds, rssGrowthMb: rssMb() - before, diskMb: folderBytes(join(dir, 'lancedb')) / 2 ** 20 };
}

/** The `k` nearest row ids of `query` by LanceDB's index, searching `ef` candidates. */
export async function lanceNearest(table: LanceTable, query: Float32Array, k: number, ef: number): Promise<number[]> {
  const rows = await table.vectorSearch(Array.from(query)).distanceType('cosine').ef(ef).limit(k).select(['id', '_distance']).toArray();
  return rows.map((row) => Number(row.id));
}
