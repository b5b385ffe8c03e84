import type { Worker } from 'node:worker_threads';
import { type PackedDocuments, packedBuffers } from '../packed-documents.js';
import { withTies } from '../ranking.js';
import type { CorpusStatistics, MatchedRows, RankedRows, SearchField, TermSearch } from '../search-index.js';
import { newShareSlots } from './shared-best-scores.js';
import { type StartWorker, threadModule } from './start-worker.js';

export interface SearchThreadData {
  /** Batches of documents sent to the thread and not yet added: bounds what a bulk load queues. */
  queued: Int32Array;
  /** Every thread's best scores per search (see shared-best-scores.ts), and this thread's place among them. */
  shareSlots: Int32Array;
  thread: number;
  /** Terms' postings appended, or lists trimmed, between turns of the thread (see search-thread.ts). */
  termsPerSlice: number;
}

export type SearchThreadCommand =
  | ({ kind: 'add'; index: number } & PackedDocuments)
  | { kind: 'remove'; index: number; rowid: number; terms: Uint8Array }
  | { kind: 'trim'; index: number; titleAverage: number; textAverage: number }
  | { kind: 'drop'; index: number }
  | { kind: 'search'; index: number; search: number; query: TermSearch; statistics: CorpusStatistics }
  | { kind: 'sync'; search: number }
  /** Every match in the thread's share of an index, with its score (TextIndex.everyMatch); answered with them. */
  | { kind: 'every'; index: number; query: TermSearch; statistics: CorpusStatistics; answer: number }
  /** Which of the terms the rows of the thread's share hold (TextIndex.termsHeld); answered with them. */
  | { kind: 'held'; index: number; rowids: Float64Array; terms: readonly number[]; field: SearchField; answer: number }
  /** Writes the thread's share of an index to a segment file; answered with its record. */
  | { kind: 'persist'; index: number; path: string; answer: number }
  /** Reads the thread's share of an index from a segment file, checked against its record. */
  | { kind: 'restore'; index: number; path: string; bytes: number; crc: number; answer: number };

/** The answer to a persist, restore or every: the segment written, or why it could not be; the matches. */
export interface SearchThreadAnswer {
  answer: number;
  segment?: { bytes: number; crc: number };
  matched?: MatchedRows;
  held?: Uint8Array;
  error?: string;
}

export type SearchThreadReply =
  /**
   * `hits`: row ids and scores alternately. One typed array crosses between threads as a copy of
   * its bytes, where an array of hit objects was an object per hit to serialise and rebuild.
   */
  { search: number; total: number; hits: Float64Array; facets?: number[][] } | { failed: string } | SearchThreadAnswer;

/** Batches queued per thread before a bulk load waits for the thread to add them. */
const QUEUED_BATCHES = 4;
/** How long a bulk load waits for a thread to take a batch before it gives the thread up for lost. */
const QUEUE_WAIT_MS = 60_000;

const WORKER_URL = threadModule('search-thread');
/**
 * A thread allocates little per search and keeps nothing young, yet V8's default young generation
 * filled to its full size between scavenges in every thread: capped, RSS at a million documents on
 * two threads was about 60 MiB lower, at the same searches per second.
 */
const YOUNG_GENERATION_MB = 8;

interface PendingSearch {
  remaining: number;
  total: number;
  hits: Array<{ rowid: number; score: number }>;
  topK: number;
  /** The facet counts summed over the threads' shares so far. */
  facets?: number[][];
  resolve: (outcome: RankedRows) => void;
  reject: (error: Error) => void;
}

/**
 * Worker threads that each hold a share of the documents of every ShardedIndex and search it,
 * so that searches use every core while the index is held once. A search goes to every thread;
 * their best hits are merged here. Messages to a thread arrive in the order sent, so a search
 * sees every change sent before it. A thread that takes a search after another has answered it
 * starts from that one's best scores (shared-best-scores.ts).
 */
export class SearchThreads {
  private readonly threads: Array<{ worker: Worker; queued: Int32Array }>;
  private readonly pending = new Map<number, PendingSearch>();
  private readonly answers = new Map<number, { resolve: (answer: SearchThreadAnswer) => void; reject: (error: Error) => void }>();
  private nextAnswer = 1;
  private nextIndex = 1;
  private nextSearch = 1;
  private failure: Error | undefined;

  constructor(count: number, termsPerSlice: number, startWorker: StartWorker) {
    const shareSlots = newShareSlots(count);
    this.threads = Array.from({ length: count }, (_, thread) => {
      const queued = new Int32Array(new SharedArrayBuffer(4));
      const data: SearchThreadData = { queued, shareSlots, thread, termsPerSlice };
      const worker = startWorker(WORKER_URL, { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
      worker.unref();
      worker.on('message', (reply: SearchThreadReply) => this.receive(reply));
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => this.fail(new Error(`a search thread stopped (exit code ${code})`)));
      return { worker, queued };
    });
  }

  get count(): number {
    return this.threads.length;
  }

  /** Set once a thread has failed: the indexes on these threads can no longer be trusted. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /** Whether every thread has added every batch sent to it; true once one has failed, as an add then throws at once. */
  get idle(): boolean {
    return this.failure !== undefined || this.threads.every(({ queued }) => Atomics.load(queued, 0) === 0);
  }

  newIndexId(): number {
    return this.nextIndex++;
  }

  /** Sends documents to one thread; waits (blocking) while it has QUEUED_BATCHES batches still to add. */
  add(thread: number, index: number, documents: PackedDocuments): void {
    const { worker, queued } = this.threads[thread];
    for (let waited = 0; ; ) {
      const queuedNow = Atomics.load(queued, 0);
      if (queuedNow < QUEUED_BATCHES) break;
      if (this.failure || waited >= QUEUE_WAIT_MS) throw this.fail(new Error('a search thread stopped taking documents'));
      const started = performance.now();
      Atomics.wait(queued, 0, queuedNow, 1000);
      waited += performance.now() - started;
    }
    Atomics.add(queued, 0, 1);
    const command: SearchThreadCommand = { kind: 'add', index, ...documents };
    worker.postMessage(command, packedBuffers(documents));
  }

  send(thread: number, command: SearchThreadCommand): void {
    this.threads[thread].worker.postMessage(command);
  }

  sendAll(command: SearchThreadCommand): void {
    for (const { worker } of this.threads) worker.postMessage(command);
  }

  /**
   * The top k over every thread's share, with documents tied with the k-th all included (as a
   * TextIndex answers); the total is the sum of the shares' totals, which do not overlap.
   */
  search(index: number, query: TermSearch, statistics: CorpusStatistics): Promise<RankedRows> {
    if (this.failure) return Promise.reject(this.failure);
    const search = this.nextSearch++;
    return new Promise((resolve, reject) => {
      this.pending.set(search, { remaining: this.threads.length, total: 0, hits: [], topK: query.topK, resolve, reject });
      this.sendAll({ kind: 'search', index, search, query, statistics });
    });
  }

  /** Sends a persist or restore to one thread; resolves with its answer (an error in it is the caller's to judge). */
  ask(thread: number, command: DistributiveOmit<Extract<SearchThreadCommand, { answer: number }>, 'answer'>): Promise<SearchThreadAnswer> {
    if (this.failure) return Promise.reject(this.failure);
    const answer = this.nextAnswer++;
    return new Promise((resolve, reject) => {
      this.answers.set(answer, { resolve, reject });
      this.send(thread, { ...command, answer } as SearchThreadCommand);
    });
  }

  /** Resolves once every thread has handled every command sent before. */
  async sync(): Promise<void> {
    if (this.failure) throw this.failure;
    const search = this.nextSearch++;
    await new Promise((resolve, reject) => {
      this.pending.set(search, { remaining: this.threads.length, total: 0, hits: [], topK: 0, resolve, reject });
      this.sendAll({ kind: 'sync', search });
    });
  }

  private receive(reply: SearchThreadReply): void {
    if ('failed' in reply) {
      this.fail(new Error(`a search thread failed: ${reply.failed}`));
      return;
    }
    if ('answer' in reply) {
      this.answers.get(reply.answer)?.resolve(reply);
      this.answers.delete(reply.answer);
      return;
    }
    const pending = this.pending.get(reply.search);
    if (!pending) return;
    pending.total += reply.total;
    for (let index = 0; index < reply.hits.length; index += 2) pending.hits.push({ rowid: reply.hits[index], score: reply.hits[index + 1] });
    if (reply.facets) pending.facets = pending.facets ? addCounts(pending.facets, reply.facets) : reply.facets;
    if (--pending.remaining > 0) return;
    this.pending.delete(reply.search);
    const ranked = { total: pending.total, hits: withTies(pending.hits, pending.topK) };
    pending.resolve(pending.facets ? { ...ranked, facets: pending.facets } : ranked);
  }

  private fail(error: Error): Error {
    this.failure ??= error;
    for (const pending of [...this.pending.values(), ...this.answers.values()]) pending.reject(this.failure);
    this.pending.clear();
    this.answers.clear();
    return this.failure;
  }

  async close(): Promise<void> {
    this.fail(new Error('the search threads were closed'));
    await Promise.all(this.threads.map(({ worker }) => worker.terminate()));
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Two shares' facet counts added up, value by value: the shares hold different documents. */
export function addCounts(sum: number[][], share: number[][]): number[][] {
  return sum.map((counts, facet) => counts.map((count, value) => count + (share[facet]?.[value] ?? 0)));
}
