import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { BATCHES_AHEAD, type IndexLoadMessage, type IndexLoadRequest } from './index-loader.js';
import { BatchDecoder, type IndexedDocument } from './text-index/text-index.js';

// Reads a corpus file's term vectors in one read transaction and posts them decoded, batch by
// batch, documents numbered from 0 in row id order (see loadIndexOnWorker).
const { path, batchRows, added } = workerData as IndexLoadRequest;
const db = new Database(path, { readonly: true, fileMustExist: true });
const decoder = new BatchDecoder();
const EMPTY = new Uint8Array(0);
let documents = 0;
let batchesSent = 0;

function send(rows: IndexedDocument[]): void {
  const decoded = decoder.decode(rows, documents);
  documents += rows.length;
  // The decoder's postings are views of buffers it reuses: the batch takes copies it can hand over.
  const batch = { ...decoded, documents: decoded.documents.slice(), frequencies: decoded.frequencies.slice() };
  for (let seen = Atomics.load(added, 0); batchesSent - seen >= BATCHES_AHEAD; seen = Atomics.load(added, 0)) Atomics.wait(added, 0, seen);
  const message: IndexLoadMessage = { kind: 'batch', batch };
  parentPort!.postMessage(message, [batch.rowids, batch.lengths, batch.terms, batch.ends, batch.documents, batch.frequencies].map((array) => array.buffer as ArrayBuffer));
  batchesSent++;
}

const removalsSeen = db.transaction(() => {
  const seen = db.prepare('SELECT coalesce(max(seq), 0) FROM removed_documents').pluck().get() as number;
  let rows: IndexedDocument[] = [];
  const stored = db.prepare('SELECT id, title_length, text_length, terms FROM documents ORDER BY id');
  for (const row of stored.iterate() as Iterable<{ id: number; title_length: number | null; text_length: number | null; terms: Uint8Array | null }>) {
    rows.push({ rowid: row.id, titleLength: row.title_length ?? 0, textLength: row.text_length ?? 0, terms: row.terms ?? EMPTY });
    if (rows.length === batchRows) {
      send(rows);
      rows = [];
    }
  }
  if (rows.length > 0) send(rows);
  return seen;
})();
db.close();
const done: IndexLoadMessage = { kind: 'read', removalsSeen };
parentPort!.postMessage(done);
