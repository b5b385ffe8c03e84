import type { Worker } from 'node:worker_threads';
import { siblingModule, startModuleWorker } from '../../platform/worker-thread.js';
import { type Embedder, EmbedderError, unusableVector } from '../embedder.js';
import type { BatchRequest, WorkerMessage } from './embed-worker.js';
import { type ModelFolder, ModelFolderError, readModelFolder } from './model-folder.js';
import { ONNX_RUNTIME_MISSING, onnxRuntimeInstalled } from './onnx-runtime.js';

const WORKER_URL = siblingModule(import.meta.url, 'embed-worker');

export interface LocalEmbedderOptions {
  /** Model workers, each running the model on one core. */
  threads: number;
  /** Texts per model run: a batch is padded to its longest text, so texts of like length go together. */
  batchSize: number;
  /** The model's name in stored vectors' keys; the folder's name by default. */
  name?: string;
}

interface Batch {
  request: BatchRequest;
  resolve(vectors: Float32Array): void;
  reject(error: Error): void;
}

/** One model worker and the batch it is running, if any. */
class ModelWorker {
  busy: Batch | undefined;
  private failure: string | undefined;

  constructor(
    private readonly worker: Worker,
    readonly loaded: Promise<void>,
  ) {}

  static start(folder: ModelFolder, next: (worker: ModelWorker) => void): ModelWorker {
    const worker = startModuleWorker(WORKER_URL, { workerData: { folder } });
    worker.unref();
    let settle: { resolve(): void; reject(error: Error): void } | undefined;
    const loaded = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const model = new ModelWorker(worker, loaded);
    worker.on('message', (message: WorkerMessage) => {
      if (message.kind === 'ready') settle?.resolve();
      else if (message.kind === 'load-failed') model.stop(message.message, settle, next);
      else {
        const batch = model.busy;
        model.busy = undefined;
        worker.unref();
        if (message.kind === 'vectors') batch?.resolve(message.vectors);
        else batch?.reject(new EmbedderError(`the model in ${folder.dir} failed: ${message.message}`));
        next(model);
      }
    });
    worker.on('error', (error) => model.stop(`a model worker failed: ${error.message}`, settle, next));
    worker.on('exit', (code) => model.stop(`a model worker stopped (exit code ${code})`, settle, next));
    return model;
  }

  get failed(): string | undefined {
    return this.failure;
  }

  run(batch: Batch): void {
    this.busy = batch;
    // Held while a batch runs, so that a process awaiting it does not end; let go when idle.
    this.worker.ref();
    this.worker.postMessage(batch.request);
  }

  private stop(message: string, settle: { reject(error: Error): void } | undefined, next: (worker: ModelWorker) => void): void {
    this.failure ??= message;
    settle?.reject(new ModelFolderError(message));
    this.busy?.reject(new EmbedderError(message));
    this.busy = undefined;
    next(this);
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

/**
 * A model run inside the service (EMBEDDINGS_MODEL_DIR): a folder's ONNX model on worker threads,
 * one core each, behind the Embedder interface. The texts of a call are put in batches of like
 * length, run on whichever worker is free, and put back in their order.
 */
export class LocalEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** Resolves once every worker has loaded the model; rejects with a ModelFolderError naming the file that failed. */
  readonly ready: Promise<void>;
  private readonly workers: ModelWorker[];
  private readonly waiting: Batch[] = [];
  private nextId = 0;

  constructor(
    readonly folder: ModelFolder,
    private readonly options: LocalEmbedderOptions,
  ) {
    if (!onnxRuntimeInstalled()) throw new ModelFolderError(ONNX_RUNTIME_MISSING);
    this.model = options.name ?? folder.name;
    this.dimensions = folder.dimensions;
    this.workers = Array.from({ length: Math.max(1, options.threads) }, () => ModelWorker.start(folder, (worker) => this.dispatch(worker)));
    this.ready = Promise.all(this.workers.map((worker) => worker.loaded)).then(() => undefined);
    // A failed load is reported to whoever awaits `ready` or embeds, not as an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  /** Reads the folder (throwing a ModelFolderError naming a missing or malformed file) and starts its workers. */
  static open(dir: string, options: LocalEmbedderOptions): LocalEmbedder {
    return new LocalEmbedder(readModelFolder(dir), options);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    try {
      await this.ready;
    } catch (error) {
      throw new EmbedderError((error as Error).message);
    }
    const order = texts.map((_, index) => index).sort((a, b) => texts[a].length - texts[b].length);
    const size = Math.max(1, Math.min(this.options.batchSize, Math.ceil(texts.length / this.workers.length)));
    const batches: Array<Promise<Float32Array>> = [];
    for (let start = 0; start < order.length; start += size) {
      const request = { id: this.nextId++, texts: order.slice(start, start + size).map((index) => texts[index]) };
      batches.push(new Promise((resolve, reject) => this.enqueue({ request, resolve, reject })));
    }
    const results = await Promise.all(batches);
    const vectors = new Array<Float32Array>(texts.length);
    order.forEach((textIndex, sorted) => {
      const flat = results[Math.floor(sorted / size)];
      const row = sorted % size;
      vectors[textIndex] = flat.subarray(row * this.dimensions, (row + 1) * this.dimensions);
    });
    vectors.forEach((vector, textIndex) => {
      const reason = unusableVector(vector);
      if (reason) throw new EmbedderError(`the model in ${this.folder.dir} gave text ${textIndex} a vector that ${reason}`, textIndex);
    });
    return vectors;
  }

  /** Stops the workers; a batch still running is rejected. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  private enqueue(batch: Batch): void {
    const free = this.workers.find((worker) => !worker.busy && !worker.failed);
    if (free) free.run(batch);
    else if (this.workers.every((worker) => worker.failed)) batch.reject(new EmbedderError(this.workers[0].failed as string));
    else this.waiting.push(batch);
  }

  /** A worker came free, or stopped: the next waiting batch, or (every worker stopped) an error to each. */
  private dispatch(worker: ModelWorker): void {
    if (!worker.failed) {
      const batch = this.waiting.shift();
      if (batch) worker.run(batch);
    } else if (this.workers.every((each) => each.failed)) {
      for (const batch of this.waiting.splice(0)) batch.reject(new EmbedderError(worker.failed));
    }
  }
}
