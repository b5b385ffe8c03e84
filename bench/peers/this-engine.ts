import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type BuiltCorpus, CLI, openBuiltCorpus, ROOT } from '../lib.js';
import { type BuildFigures, type FacetCounts, type Fields, medianMs, type Peer } from './peer.js';

/**
 * This engine as the service runs it on the embedded store, but on one thread (no search threads):
 * built by the CLI's ingest, then opened as the service opens it (the index loaded from the stored
 * term vectors). Totals are always exact.
 */
export class ThisEngine implements Peer {
  readonly name = 'metered-search';
  private corpus: BuiltCorpus | undefined;
  private analyze: (text: string) => string[] = () => [];

  constructor(private readonly folder: string) {}

  async build(path: string, fields: Fields): Promise<BuildFigures> {
    if (fields.id !== 'doc_id' && fields.id !== '_id') throw new Error(`the ingest reads doc_id or _id, not ${fields.id}`);
    const dataDir = join(this.folder, 'data');
    const started = performance.now();
    execFileSync(process.execPath, [CLI, 'ingest', path], { env: { ...process.env, DATA_DIR: dataDir, SEED_DEMO: 'false' }, stdio: 'ignore' });
    const seconds = (performance.now() - started) / 1000;
    global.gc?.();
    const before = process.memoryUsage().rss;
    const loading = performance.now();
    const { corpus, analyze } = await openBuiltCorpus(ROOT, dataDir, { searchThreads: 1 });
    await corpus.prepareSearch();
    const loadSeconds = (performance.now() - loading) / 1000;
    global.gc?.();
    this.corpus = corpus;
    this.analyze = analyze;
    const documents = await corpus.countDocuments();
    return { documents, seconds, bytes: folderBytes(dataDir), memoryBytes: process.memoryUsage().rss - before, loadSeconds };
  }

  /** A search as the index takes it: a structured or sorted one, say. */
  searchWith(request: unknown) {
    return this.corpus!.search(request);
  }

  private search(text: string, k: number) {
    return this.corpus!.search({ terms: this.analyze(text), field: { kind: 'all' }, filters: [], topK: k });
  }

  async time(queries: string[], options: { k: number; passes: number }) {
    const ms: number[] = [];
    const totals: number[] = [];
    for (const text of queries) {
      ms.push(await medianMs(() => this.search(text, options.k), options.passes));
      totals.push((await this.search(text, options.k)).total);
    }
    return { ms, totals };
  }

  async rank(queries: string[], k: number): Promise<string[][]> {
    const ranked: string[][] = [];
    for (const text of queries) ranked.push((await this.search(text, k)).hits.map((hit) => hit.docId));
    return ranked;
  }

  async facets(queries: string[], options: { k: number; fields: string[]; passes: number }) {
    const ms: number[] = [];
    const counts: FacetCounts[] = [];
    const faceted = (text: string) =>
      this.corpus!.search({
        terms: this.analyze(text),
        field: { kind: 'all' },
        filters: [],
        topK: options.k,
        facets: { fields: options.fields, limit: 100 },
      });
    for (const text of queries) {
      ms.push(await medianMs(() => faceted(text), options.passes));
      counts.push(((await faceted(text)) as { facets?: FacetCounts }).facets ?? {});
    }
    return { ms, counts };
  }

  /**
   * Waits for the index the corpus writes once it is unchanged, then opens the corpus again, as a
   * later start does: its index read back from disk, positions left in the files.
   */
  async reopenFromDisk(): Promise<void> {
    const manifest = join(this.folder, 'data', 'index', 'manifest.json');
    const waitedFrom = Date.now();
    while (!existsSync(manifest)) {
      if (Date.now() - waitedFrom > 120_000) throw new Error(`no index was written to ${manifest}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await this.corpus?.close();
    const { corpus } = await openBuiltCorpus(ROOT, join(this.folder, 'data'), { searchThreads: 1 });
    await corpus.prepareSearch();
    this.corpus = corpus;
  }

  async close(): Promise<void> {
    await this.corpus?.close();
  }
}

function folderBytes(path: string): number {
  return readdirSync(path, { withFileTypes: true }).reduce(
    (sum, entry) => sum + (entry.isDirectory() ? folderBytes(join(path, entry.name)) : statSync(join(path, entry.name)).size),
    0,
  );
}
