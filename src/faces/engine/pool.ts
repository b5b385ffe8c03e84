import type { Worker } from 'node:worker_threads';
import { siblingModule, startModuleWorker } from '../../platform/worker-thread.js';
import type { Description } from './describe.js';

interface Job {
  image: Uint8Array;
  resolve: (description: Description) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  /** False while the worker starts (models loading) or is being stopped: no job is sent to it. */
  serving: boolean;
  busy: { job: Job; timer: NodeJS.Timeout | undefined } | undefined;
}

export interface FaceEngineOptions {
  /** How long one image may hold a worker; past it the worker is stopped and replaced. 0: no limit. */
  jobTimeoutMs?: number;
}

/** An image that held its worker past the job time limit. */
export class FaceJobTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the face engine stopped an image that took longer than ${timeoutMs} ms`);
  }
}

const WORKER_URL = siblingModule(import.meta.url, 'worker');

/**
 * Face inference on worker threads, never on the event loop: N workers, each loading the models
 * once and describing one image at a time; images wait in a queue for the next free worker.
 */
export class FaceEnginePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;
  private readonly jobTimeoutMs: number;
  readonly ready: Promise<void>;

  constructor(
    readonly workers: number,
    options: FaceEngineOptions = {},
  ) {
    this.jobTimeoutMs = options.jobTimeoutMs ?? 0;
    const started = Array.from({ length: workers }, () => {
      const slot = { serving: false, busy: undefined } as Slot;
      this.slots.push(slot);
      return this.start(slot);
    });
    this.ready = Promise.all(started).then(() => undefined);
  }

  /** Images waiting for a worker, not counting those being described. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Starts the slot's worker; one that dies (out of memory, stopped at its time limit) fails its image and is replaced. */
  private start(slot: Slot): Promise<void> {
    const worker = startModuleWorker(WORKER_URL);
    slot.worker = worker;
    slot.serving = false;
    let started = false;
    const ready = new Promise<void>((resolve, reject) => {
      worker.once('message', () => {
        started = true;
        slot.serving = true;
        resolve();
        this.dispatch();
      });
      worker.once('error', reject);
    });
    worker.on('message', (message: { id?: number; result?: Description; error?: string }) => {
      if (message.id === undefined || !slot.busy) return;
      const { job } = this.finish(slot)!;
      if (message.error !== undefined) job.reject(new Error(message.error));
      else job.resolve(message.result!);
      this.dispatch();
    });
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      this.finish(slot)?.job.reject(new Error('the face engine worker stopped'));
      // A worker that never became ready is not restarted: its start-up error fails `ready` instead.
      if (this.closed || !started) return;
      void this.start(slot).catch(() => undefined);
    });
    return ready;
  }

  private finish(slot: Slot): Slot['busy'] {
    const busy = slot.busy;
    slot.busy = undefined;
    if (busy?.timer) clearTimeout(busy.timer);
    return busy;
  }

  describe(image: Uint8Array): Promise<Description> {
    if (this.closed) return Promise.reject(new Error('the face engine is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ image, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.serving || slot.busy || this.queue.length === 0) continue;
      const job = this.queue.shift()!;
      const timer = this.jobTimeoutMs > 0 ? setTimeout(() => this.stopOverdue(slot), this.jobTimeoutMs) : undefined;
      slot.busy = { job, timer };
      slot.worker.postMessage({ id: this.nextId++, image: job.image });
    }
  }

  /** A decoder or model cannot be interrupted mid-image: the worker is stopped and a new one started. */
  private stopOverdue(slot: Slot): void {
    const busy = this.finish(slot);
    if (!busy) return;
    slot.serving = false;
    busy.job.reject(new FaceJobTimeoutError(this.jobTimeoutMs));
    void slot.worker.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the face engine is closed'));
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }
}
