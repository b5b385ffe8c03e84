import { siblingModule, startModuleWorker } from '../worker-thread.js';
import { BatchDecoder, type DecodedBatch, type DecodedDocuments } from './text-index/batch-decoder.js';
import { TextIndex } from './text-index/text-index.js';

export interface IndexLoadRequest {
  /** The corpus file. */
  path: string;
  batchRows: number;
  /** Batches the loading thread has added: the worker stays at most BATCHES_AHEAD in front. */
  added: Int32Array;
}

export type IndexLoadMessage =
  | { kind: 'batch'; batch: DecodedBatch }
  | { kind: 'documents'; documents: DecodedDocuments }
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
export function loadIndexOnWorker(path: string, batchRows: number): Promise<{ index: TextIndex; removalsSeen: number }> {
  const added = new Int32Array(new SharedArrayBuffer(4));
  const request: IndexLoadRequest = { path, batchRows, added };
  const worker = startModuleWorker(WORKER_URL, { workerData: request });
  const index = new TextIndex();
  const decoder = new BatchDecoder();
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
        index.addDecoded(message.kind === 'batch' ? message.batch : decoder.group(message.documents));
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
