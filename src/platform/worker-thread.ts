import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module at `url`: the compiled JavaScript; or, when the caller runs
 * from TypeScript source under tsx (the tests), the source with tsx's loader registered first.
 */
export function startModuleWorker(url: URL, options: WorkerOptions = {}): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, options);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** The URL of a sibling module of `base`, in the same form (.ts from source, .js compiled). */
export function siblingModule(base: string, name: string): URL {
  return new URL(`./${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);
}
