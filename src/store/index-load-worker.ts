import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { BATCHES_AHEAD, type IndexLoadMessage, type IndexLoadRequest } from './index-loader.js';
import { BatchDecoder } from './text-index/batch-decoder.js';
import { packDocuments, packedBuffers } from './text-index/packed-documents.js';
import type { IndexedDocument } from './text-index/text-index.js';

// Reads a corpus file's term vectors in one read transaction and posts them batch by batch, in
// row id order: decoded, documents numbered from 0 (see loadIndexOnWorker), or packed as read
// (see loadShardedOnWorker).
const { path, batchRows, added, packed } = workerData as IndexLoadRequest;
const db = new Database(path, { readonly: true, fileMustExist: true });
const decoder = new BatchDecoder();
const EMPTY = new Uint8Array(0);
let documentsSent = 0;
let batchesSent = 0;

function send(rows: IndexedDocument[]): void {
  if (packed) {
    waitForRoom();
    const documents = packDocuments(rows);
    const message: IndexLoadMessage = { kind: 'packed', documents };
    parentPort!.postMessage(message, packedBuffers(documents));
    batchesSent++;
    return;
  }
  const decoded = decoder.decodeDocuments(rows, documentsSent);
  documentsSent += rows.length;
  waitForRoom();
  // The decoder's postings are views of buffers it reuses: a message takes copies it can hand over.
  let message: IndexLoadMessage;
  if (Atomics.load(added, 0) === batchesSent) {
    // The main thread has added every batch sent, so it waits: it groups this one, and this thread reads on.
    const copies = { postingTerms: decoded.postingTerms.slice(), documents: decoded.documents.slice(), frequencies: decoded.frequencies.slice() };
    message = { kind: 'documents', documents: { ...decoded, ...copies } };
  } else {
    const batch = decoder.group(decoded);
    message = { kind: 'batch', batch: { ...batch, documents: batch.documents.slice(), frequencies: batch.frequencies.slice() } };
  }
  const arrays = Object.values(message.kind === 'batch' ? message.batch : message.documents).filter(ArrayBuffer.isView);
  parentPort!.postMessage(message, arrays.map((array) => array.buffer as ArrayBuffer));
  batchesSent++;
}

function waitForRoom(): void {
  for (let seen = Atomics.load(added, 0); batchesSent - seen >= BATCHES_AHEAD; seen = Atomics.load(added, 0)) Atomics.wait(added, 0, seen);
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
