/** A search engine as bench:peers measures it, whatever runs it. */
export interface Peer {
  readonly name: string;
  /** Indexes a JSON lines file whose records name their id, title and text fields so. */
  build(path: string, fields: Fields): Promise<BuildFigures>;
  /** Each query's median time in ms over `passes` (after one unmeasured run), and its total. */
  time(queries: string[], options: { k: number; exactTotals: boolean; passes: number }): Promise<{ ms: number[]; totals: number[] }>;
  /** Each query's best k document ids. */
  rank(queries: string[], k: number): Promise<string[][]>;
  /**
   * Each query's median time in ms over `passes` for its best k and, over every match, how many
   * hold each value of each of `fields` (metadata); with the counts of each query, for checking.
   */
  facets(queries: string[], options: { k: number; fields: string[]; passes: number }): Promise<{ ms: number[]; counts: FacetCounts[] }>;
  close(): Promise<void>;
}

export interface Fields {
  id: string;
  title: string;
  text: string;
  /** Metadata fields kept for facets, where the corpus has them. */
  facets?: string[];
}

/** Per field, per value, how many matches hold it. */
export type FacetCounts = Record<string, Record<string, number>>;

export interface BuildFigures {
  documents: number;
  seconds: number;
  /** The index on disk. */
  bytes: number;
  /** What holding the index took in memory, where it is measured (RSS after loading, less before). */
  memoryBytes?: number;
  /** Seconds from opening the built index to the first search it can answer. */
  loadSeconds?: number;
}

/** The median of `passes` timings of `run`, after one unmeasured run. */
export async function medianMs(run: () => unknown, passes: number): Promise<number> {
  await run();
  const times: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}
