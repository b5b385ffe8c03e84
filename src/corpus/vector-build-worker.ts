import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { VectorIndex } from '../search/vector-index.js';
import { LAST_REMOVAL_SQL, LAST_ROWID_SQL, VECTORS_FROM_SQL } from './corpus-file.js';
import type { VectorBuildRequest, VectorBuildResult } from './vector-build.js';

// Reads a corpus file's stored vectors in one read transaction, so that the highest row id and the
// last deletion it reports are those of the rows it added, and saves the index built from them.
const { path, dimensions, threads, stepRows, out } = workerData as VectorBuildRequest;
const db = new Database(path, { readonly: true, fileMustExist: true });
const result = db.transaction((): VectorBuildResult => {
  const removalsSeen = db.prepare(LAST_REMOVAL_SQL).pluck().get() as number;
  const highestRowid = db.prepare(LAST_ROWID_SQL).pluck().get() as number;
  const vectorsFrom = db.prepare(VECTORS_FROM_SQL);
  const index = new VectorIndex(dimensions);
  let added = 0;
  for (let after = 0; after < highestRowid; ) {
    const rows = vectorsFrom.all(after, highestRowid, stepRows) as Array<{ id: number; vector: Uint8Array }>;
    added += index.addStored(rows, threads);
    after = rows.length < stepRows ? highestRowid : rows[rows.length - 1].id;
  }
  index.save(out);
  return { highestRowid, removalsSeen, added };
})();
db.close();
parentPort!.postMessage(result);
