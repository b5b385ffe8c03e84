import type { Worker, WorkerOptions } from 'node:worker_threads';

/**
 * How the engine starts its worker threads, given by whoever builds it: the engine stays free of
 * how modules are loaded (compiled JavaScript, or TypeScript source under tsx in the tests).
 */
export type StartWorker = (url: URL, options: WorkerOptions) => Worker;

/** The URL of one of the engine's thread modules, in the form this module was loaded in (.ts or .js). */
export function threadModule(name: string): URL {
  return new URL(`./${name}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
}
