import { createRequire } from 'node:module';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Gives memory the C allocator holds free back to the system: glibc's malloc_trim, through the
 * optional addon in native/ (`npm run build:native`, which needs a C compiler). The search index
 * is many typed arrays grown by copying, and glibc keeps what they free resident until asked (at a
 * million documents, about 230 MiB after a load). Returns whether any was given back; without the
 * addon (not built, or the C library is not glibc) it does nothing.
 */
const addon = ((): { trim: () => boolean; trimInBackground: () => Promise<boolean> } | undefined => {
  try {
    return createRequire(import.meta.url)('../../../../native/build/Release/malloc_trim.node');
  } catch {
    return undefined;
  }
})();

/** Whether the malloc_trim addon was built and loaded. */
export const canReleaseFreedMemory = addon !== undefined;

export const releaseFreedMemory: () => boolean = addon?.trim ?? (() => false);

/**
 * As releaseFreedMemory, on libuv's thread pool: for a thread that is serving. After a rebuilt
 * index took over at a million documents, the walk over what the old one freed held the event loop
 * for 185 ms.
 */
export const releaseFreedMemoryInBackground: () => Promise<boolean> = addon?.trimInBackground ?? (() => Promise.resolve(false));

/** After a full collection, array buffers are freed by a sweeper thread: give it this long. */
export const SWEEP_MS = 1000;
let waitingForCollection: PerformanceObserver | undefined;

/**
 * Releases freed memory once the next full collection has run: for memory held by garbage, such
 * as the index a rebuilt one replaced, which is freed only when it is collected.
 */
export function releaseAfterNextCollection(): void {
  if (waitingForCollection) return;
  const observer = new PerformanceObserver((entries) => {
    const major = entries
      .getEntries()
      .some((entry) => (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
    if (!major || waitingForCollection !== observer) return;
    observer.disconnect();
    waitingForCollection = undefined;
    setTimeout(() => void releaseFreedMemoryInBackground(), SWEEP_MS).unref();
  });
  waitingForCollection = observer;
  observer.observe({ entryTypes: ['gc'] });
}

/**
 * A full collection now, then the freed memory released: for a search thread after a bulk load or
 * a rebuild, which allocates too little while it serves for V8 to collect the lists it copied (at a
 * million documents, about 80 MiB a thread stayed resident). gc() is offered only with
 * --expose-gc; the flag set at run time exposes it to contexts created afterwards.
 */
export function collectAndRelease(): void {
  releaseAfterNextCollection();
  collectNow();
}

/**
 * A full collection now, then, once the sweeper has freed what it found, the freed memory
 * released: for the service before it listens, after the index has loaded (the load's garbage
 * included the doc_ids and titles' buffers as they grew, over 100 MiB at a million documents).
 */
export async function collectThenRelease(): Promise<void> {
  collectNow();
  await new Promise((resolve) => setTimeout(resolve, SWEEP_MS));
  releaseFreedMemory();
}

function collectNow(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
