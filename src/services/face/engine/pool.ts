import type { Worker } from 'node:worker_threads';
import { siblingModule, startModuleWorker } from '../../../worker-thread.js';
import type { Description } from './describe.js';

interface Job {
  image: Uint8Array;
  resolve: (description: Description) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  busy: Job | undefined;
}

const WORKER_URL = siblingModule(import.meta.url, 'worker');

function startWorker(): Worker {
  return startModuleWorker(WORKER_URL);
}

/**
 * Face inference on worker threads, never on the event loop: N workers, each loading the models
 * once and describing one image at a time; images wait in a queue for the next free worker.
 */
export class FaceEnginePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;
  readonly ready: Promise<void>;

  constructor(workers: number) {
    const started = Array.from({ length: workers }, () => {
      const slot = { busy: undefined } as Slot;
      this.slots.push(slot);
      return this.start(slot);
    });
    this.ready = Promise.all(started).then(() => undefined);
  }

  /** Starts the slot's worker; one that dies (out of memory, say) fails its image and is replaced. */
  private start(slot: Slot): Promise<void> {
    const worker = startWorker();
    slot.worker = worker;
    let serving = false;
    const ready = new Promise<void>((resolve, reject) => {
      worker.once('message', () => {
        serving = true;
        resolve();
      });
      worker.once('error', reject);
    });
    worker.on('message', (message: { id?: number; result?: Description; error?: string }) => {
      if (message.id === undefined || !slot.busy) return;
      const job = slot.busy;
      slot.busy = undefined;
      if (message.error !== undefined) job.reject(new Error(message.error));
      else job.resolve(message.result!);
      this.dispatch();
    });
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      slot.busy?.reject(new Error('the face engine worker stopped'));
      slot.busy = undefined;
      // A worker that never became ready is not restarted: its start-up error fails `ready` instead.
      if (this.closed || !serving) return;
      void this.start(slot).then(() => this.dispatch(), () => undefined);
    });
    return ready;
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
      if (slot.busy || this.queue.length === 0) continue;
      const job = this.queue.shift()!;
      slot.busy = job;
      slot.worker.postMessage({ id: this.nextId++, image: job.image });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the face engine is closed'));
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }
}
