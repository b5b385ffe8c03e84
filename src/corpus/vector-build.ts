import { siblingModule, startModuleWorker } from '../platform/worker-thread.js';

export interface VectorBuildRequest {
  /** The corpus file, read in one read transaction. */
  path: string;
  dimensions: number;
  threads: number;
  /** Rows read and added at a time. */
  stepRows: number;
  /** Where the built index is saved. */
  out: string;
}

/** What the saved index holds: every stored vector through `highestRowid`, as of deletion `removalsSeen`. */
export interface VectorBuildResult {
  highestRowid: number;
  removalsSeen: number;
  added: number;
}

const WORKER_URL = siblingModule(import.meta.url, 'vector-build-worker');

/**
 * Builds the vector index of a corpus file on a worker thread and saves it to `request.out`:
 * usearch's additions hold the thread that makes them, so a build of a million vectors (minutes)
 * runs here while the main thread serves. `stop` ends the worker (at its next step).
 */
export function buildVectorsOnWorker(request: VectorBuildRequest): { built: Promise<VectorBuildResult>; stop(): Promise<void> } {
  const worker = startModuleWorker(WORKER_URL, { workerData: request });
  const built = new Promise<VectorBuildResult>((resolve, reject) => {
    worker.once('message', (result: VectorBuildResult) => resolve(result));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the vector index build worker stopped (exit code ${code})`)));
  });
  return {
    built,
    stop: async () => {
      await worker.terminate();
    },
  };
}
