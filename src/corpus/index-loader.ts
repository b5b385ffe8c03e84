import { siblingModule, startModuleWorker } from '../platform/worker-thread.js';
import { BatchDecoder, type DecodedBatch, type DecodedDocuments } from '../search/engine/batch-decoder.js';
import { type PackedLabels, packLabels } from '../search/engine/document-labels.js';
import { LocalIndex } from '../search/engine/local-index.js';
import type { PackedDocuments } from '../search/engine/packed-documents.js';
import type { IndexedDocument } from '../search/engine/search-index.js';
import type { ShardedIndex } from '../search/engine/sharded-index.js';
import { TextIndex } from '../search/engine/text-index.js';

/** What the index reads of a document's row: its term vector and lengths, and its doc_id and title for the hits. */
export interface IndexRow {
  id: number;
  doc_id: string;
  title: string;
  title_length: number | null;
  text_length: number | null;
  terms: Uint8Array | null;
}

export const INDEX_ROW_COLUMNS = 'id, doc_id, title, title_length, text_length, terms';

const EMPTY = new Uint8Array(0);

/** Rows in batches of `size` as an index takes them: the documents, and their labels packed. */
export function* indexBatches(rows: Iterable<IndexRow>, size: number): Generator<{ documents: IndexedDocument[]; labels: PackedLabels }> {
  let batch: IndexRow[] = [];
  const complete = () => ({
    documents: batch.map((row) => ({
      rowid: row.id,
      titleLength: row.title_length ?? 0,
      textLength: row.text_length ?? 0,
      terms: row.terms ?? EMPTY,
    })),
    labels: packLabels(batch),
  });
  for (const row of rows) {
    batch.push(row);
    if (batch.length === size) {
      yield complete();
      batch = [];
    }
  }
  if (batch.length > 0) yield complete();
}

export interface IndexLoadRequest {
  /** The corpus file. */
  path: string;
  batchRows: number;
  /** Batches the loading thread has added: the worker stays at most BATCHES_AHEAD in front. */
  added: Int32Array;
  /** Rows as read, packed (for a ShardedIndex, whose threads decode them), rather than decoded. */
  packed: boolean;
}

/** A batch of documents with their doc_ids and titles; then, once every row is read, where the deletion log stood. */
export type IndexLoadMessage =
  | { kind: 'batch'; batch: DecodedBatch; labels: PackedLabels }
  | { kind: 'documents'; documents: DecodedDocuments; labels: PackedLabels }
  | { kind: 'packed'; documents: PackedDocuments; labels: PackedLabels }
  | { kind: 'read'; removalsSeen: number };

/** Decoded batches waiting to be added, at most: bounds the memory they hold when the adding thread is the slower one. */
export const BATCHES_AHEAD = 4;

const WORKER_URL = siblingModule(import.meta.url, 'index-load-worker');

/**
 * Builds the search index of a corpus file with a second thread: a worker reads the stored term
 * vectors (one read transaction) and decodes them into batches grouped by term, while this thread
 * appends the batches to the posting lists. At a million documents reading rows and decoding them
 * is about 60% of a load on one thread, so the worker is the busier one: a batch it finishes while
 * this thread waits for one comes ungrouped, and is grouped here. Resolves with the index and the
 * last deletion logged as of the worker's snapshot; the caller brings it level with the file from
 * there, as with any index.
 */
export function loadIndexOnWorker(path: string, batchRows: number): Promise<{ index: LocalIndex; removalsSeen: number }> {
  const index = new TextIndex();
  const decoder = new BatchDecoder();
  const loaded = readOnWorker({ path, batchRows, packed: false }, index, (message) => {
    if (message.kind !== 'packed') index.addDecoded(message.kind === 'batch' ? message.batch : decoder.group(message.documents), message.labels);
  });
  return loaded.then(({ removalsSeen }) => ({ index: new LocalIndex(index), removalsSeen }));
}

/**
 * Fills an empty ShardedIndex from a corpus file: a worker reads the rows and packs them, this
 * thread counts their statistics and hands each batch on to a search thread, which decodes it.
 */
export function loadShardedOnWorker(path: string, batchRows: number, index: ShardedIndex): Promise<{ index: ShardedIndex; removalsSeen: number }> {
  return readOnWorker({ path, batchRows, packed: true }, index, (message) => {
    if (message.kind === 'packed') index.addPacked(message.documents, message.labels);
  });
}

function readOnWorker<Index>(
  request: Omit<IndexLoadRequest, 'added'>,
  index: Index,
  add: (message: Exclude<IndexLoadMessage, { kind: 'read' }>) => void,
): Promise<{ index: Index; removalsSeen: number }> {
  const added = new Int32Array(new SharedArrayBuffer(4));
  const worker = startModuleWorker(WORKER_URL, { workerData: { ...request, added } satisfies IndexLoadRequest });
  return new Promise((resolve, reject) => {
    const fail = (error: Error) => {
      reject(error);
      void worker.terminate();
    };
    worker.on('message', (message: IndexLoadMessage) => {
      if (message.kind === 'read') {
        resolve({ index, removalsSeen: message.removalsSeen });
        void worker.terminate();
        return;
      }
      try {
        add(message);
      } catch (error) {
        fail(error as Error);
        return;
      }
      Atomics.add(added, 0, 1);
      Atomics.notify(added, 0);
    });
    worker.on('error', fail);
    worker.on('exit', (code) => reject(new Error(`the index load worker stopped (exit code ${code})`)));
  });
}
