/** A search engine as bench:peers measures it, whatever runs it. */
export interface Peer {
  readonly name: string;
  /** Indexes a JSON lines file whose records name their id, title and text fields so. */
  build(path: string, fields: Fields): Promise<BuildFigures>;
  /** Each query's median time in ms over `passes` (after one unmeasured run), and its total. */
  time(queries: string[], options: { k: number; exactTotals: boolean; passes: number }): Promise<{ ms: number[]; totals: number[] }>;
  /** Each query's best k document ids. */
  rank(queries: string[], k: number): Promise<string[][]>;
  close(): Promise<void>;
}

export interface Fields {
  id: string;
  title: string;
  text: string;
}

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
