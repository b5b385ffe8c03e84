import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { BatchDecoder } from '../search/engine/batch-decoder.js';
import type { PackedLabels } from '../search/engine/document-labels.js';
import { packDocuments, packedBuffers } from '../search/engine/packed-documents.js';
import type { IndexedDocument } from '../search/engine/search-index.js';
import { LAST_REMOVAL_SQL } from './corpus-file.js';
import { BATCHES_AHEAD, INDEX_ROW_COLUMNS, type IndexLoadMessage, type IndexLoadRequest, type IndexRow, indexBatches } from './index-loader.js';

// Reads a corpus file's term vectors in one read transaction and posts them batch by batch, in
// row id order: decoded, documents numbered from 0 (see loadIndexOnWorker), or packed as read
// (see loadShardedOnWorker); each batch with its documents' doc_ids and titles.
const { path, batchRows, added, packed } = workerData as IndexLoadRequest;
const db = new Database(path, { readonly: true, fileMustExist: true });
const decoder = new BatchDecoder();
let documentsSent = 0;
let batchesSent = 0;

function send(rows: IndexedDocument[], labels: PackedLabels): void {
  const labelBuffers = [labels.bytes.buffer, labels.ends.buffer] as ArrayBuffer[];
  if (packed) {
    waitForRoom();
    const documents = packDocuments(rows);
    const message: IndexLoadMessage = { kind: 'packed', documents, labels };
    parentPort!.postMessage(message, [...packedBuffers(documents), ...labelBuffers]);
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
    const copies = {
      postingTerms: decoded.postingTerms.slice(),
      documents: decoded.documents.slice(),
      frequencies: decoded.frequencies.slice(),
      positions: decoded.positions.slice(),
      positionStarts: decoded.positionStarts.slice(),
      positionEnds: decoded.positionEnds.slice(),
    };
    message = { kind: 'documents', documents: { ...decoded, ...copies }, labels };
  } else {
    const batch = decoder.group(decoded);
    const copies = {
      documents: batch.documents.slice(),
      frequencies: batch.frequencies.slice(),
      positions: batch.positions.slice(),
      positionStarts: batch.positionStarts.slice(),
      positionEnds: batch.positionEnds.slice(),
    };
    message = { kind: 'batch', batch: { ...batch, ...copies }, labels };
  }
  const arrays = Object.values(message.kind === 'batch' ? message.batch : message.documents).filter(ArrayBuffer.isView);
  parentPort!.postMessage(message, [...arrays.map((array) => array.buffer as ArrayBuffer), ...labelBuffers]);
  batchesSent++;
}

function waitForRoom(): void {
  for (let seen = Atomics.load(added, 0); batchesSent - seen >= BATCHES_AHEAD; seen = Atomics.load(added, 0)) Atomics.wait(added, 0, seen);
}

const removalsSeen = db.transaction(() => {
  const seen = db.prepare(LAST_REMOVAL_SQL).pluck().get() as number;
  const stored = db.prepare(`SELECT ${INDEX_ROW_COLUMNS} FROM documents ORDER BY id`);
  for (const { documents, labels } of indexBatches(stored.iterate() as Iterable<IndexRow>, batchRows)) send(documents, labels);
  return seen;
})();
db.close();
const done: IndexLoadMessage = { kind: 'read', removalsSeen };
parentPort!.postMessage(done);
