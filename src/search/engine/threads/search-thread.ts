import { parentPort, workerData } from 'node:worker_threads';
import { FilterBitmaps } from '../filter-bitmaps.js';
import { unpackDocuments } from '../packed-documents.js';
import { ON_DISK_ARRAYS } from '../segments/documents-segment.js';
import { readSegment, writeSegment } from '../segments/segment-file.js';
import { TextIndex } from '../text-index.js';
import { collectAndRelease } from './release-memory.js';
import type { SearchThreadAnswer, SearchThreadCommand, SearchThreadData, SearchThreadReply } from './search-threads.js';
import { SharedBestScores } from './shared-best-scores.js';

// One search thread (see SearchThreads): holds its share of the documents of each ShardedIndex,
// as a TextIndex, and searches it with the whole corpus's statistics the main thread sends.
//
// Changes to an index are queued per index and carried out a slice at a time between messages,
// so that a search of the serving index does not wait for a large change to another (a rebuild's
// steps: 500 documents take about 35 ms to add at a million, and searches meanwhile waited 37 ms
// at the median). A search, or a sync, first carries out every change queued before it for the
// index it reads, so it sees them all, as if they had been made in the order sent; except a trim,
// which changes no result and takes about a second at a million documents: it goes on in the
// background, and changes after it may be carried out first.
const { queued, shareSlots, thread, termsPerSlice } = workerData as SearchThreadData;
const sharedBest = new SharedBestScores(shareSlots, thread);
/** Filter bitmaps kept per index, as SqliteCorpus keeps them for an index of its own. */
const FILTER_CACHE_ENTRIES = 32;

interface Change {
  steps: Iterator<void>;
  /** For an add: counted down in `queued` once carried out (or dropped). */
  isAdd: boolean;
  /** Changes no search's result: a search need not wait for it. */
  background: boolean;
}

interface Entry {
  index: TextIndex;
  filters: FilterBitmaps;
  changes: Change[];
}

const indexes = new Map<number, Entry>();
/** Segments being written, a slice a turn: each from what its index held when asked (see captureDocuments). */
const writes: Array<{ steps: Iterator<void, { bytes: number; crc: number }>; answer: number }> = [];
const NO_HITS = new Float64Array(0);
let pumpScheduled = false;

function entryFor(id: number): Entry {
  let entry = indexes.get(id);
  if (!entry) {
    entry = { index: new TextIndex(), filters: new FilterBitmaps(FILTER_CACHE_ENTRIES), changes: [] };
    indexes.set(id, entry);
  }
  return entry;
}

/** `work` as a change of one step, run when the pump reaches it. */
// biome-ignore lint/correctness/useYield: a change is a generator; this one finishes in its first step
function* once(work: () => void): Generator<void, void, void> {
  work();
}

function queue(entry: Entry, steps: Iterator<void>, kind: 'add' | 'other' | 'background'): void {
  entry.changes.push({ steps, isAdd: kind === 'add', background: kind === 'background' });
  schedulePump();
}

function finished(change: Change): void {
  if (!change.isAdd) return;
  Atomics.sub(queued, 0, 1);
  Atomics.notify(queued, 0);
}

/** Carries out one slice of the change at `position` of `entry`'s queue; false when there is none. */
function step(entry: Entry, position = 0): boolean {
  const change = entry.changes[position];
  if (!change) return false;
  try {
    if (!change.steps.next().done) return true;
  } catch (error) {
    entry.changes.splice(position, 1);
    finished(change);
    throw error;
  }
  entry.changes.splice(position, 1);
  entry.filters.clear();
  finished(change);
  return true;
}

/** Every change queued for `entry`, or (for a search) every one but those in the background. */
function carryOut(entry: Entry, background: boolean): void {
  let position = 0;
  while (position < entry.changes.length) {
    if (!background && entry.changes[position].background) position++;
    else step(entry, position);
  }
}

/** Whether a change queued in the background (a trim) will collect garbage when it is done. */
function collectionQueued(): boolean {
  for (const entry of indexes.values()) if (entry.changes.some((change) => change.background)) return true;
  return false;
}

function schedulePump(): void {
  if (pumpScheduled) return;
  pumpScheduled = true;
  setImmediate(pump);
}

/** One slice of each index's oldest change, then a turn for the messages waiting. */
function pump(): void {
  pumpScheduled = false;
  let more = false;
  try {
    for (const entry of indexes.values()) if (step(entry) && entry.changes.length > 0) more = true;
  } catch (error) {
    fail(error);
  }
  const write = writes[0];
  if (write) {
    more = true;
    try {
      const next = write.steps.next();
      if (next.done) {
        writes.shift();
        answer({ answer: write.answer, segment: next.value });
      }
    } catch (error) {
      writes.shift();
      answer({ answer: write.answer, error: (error as Error).message });
    }
  }
  if (more) schedulePump();
}

function answer(reply: SearchThreadAnswer): void {
  parentPort!.postMessage(reply);
}

function fail(error: unknown): void {
  const reply: SearchThreadReply = { failed: (error as Error).message };
  parentPort!.postMessage(reply);
}

function handle(command: SearchThreadCommand): SearchThreadReply | undefined {
  switch (command.kind) {
    case 'add': {
      const entry = entryFor(command.index);
      queue(entry, entry.index.addInSlices(unpackDocuments(command), termsPerSlice), 'add');
      return undefined;
    }
    case 'remove': {
      const entry = entryFor(command.index);
      queue(
        entry,
        once(() => entry.index.remove(command.rowid, command.terms)),
        'other',
      );
      return undefined;
    }
    case 'trim': {
      const entry = entryFor(command.index);
      queue(entry, entry.index.trimInSlices(termsPerSlice), 'background');
      queue(entry, once(collectAndRelease), 'background');
      queue(entry, entry.index.warmBoundsInSlices(command.titleAverage, command.textAverage), 'background');
      return undefined;
    }
    case 'drop': {
      const entry = indexes.get(command.index);
      indexes.delete(command.index);
      for (const change of entry?.changes ?? []) finished(change);
      // A rebuilt index takes over by a trim, then the old one's drop: the trim ends in a collection
      // that frees the old index too. Each collection holds this thread's searches (90-180 ms at a
      // million documents), so one is enough.
      if (!collectionQueued()) collectAndRelease();
      return undefined;
    }
    case 'persist': {
      // What it holds once every change sent before is carried out; written in the background.
      const entry = entryFor(command.index);
      carryOut(entry, false);
      const { scalars, arrays } = entry.index.captureSegment();
      writes.push({ steps: writeSegment(command.path, scalars, arrays), answer: command.answer });
      schedulePump();
      return undefined;
    }
    case 'restore': {
      try {
        const index = new TextIndex();
        index.restoreSegment(readSegment(command.path, command, ON_DISK_ARRAYS));
        indexes.set(command.index, { index, filters: new FilterBitmaps(FILTER_CACHE_ENTRIES), changes: [] });
        return { answer: command.answer };
      } catch (error) {
        return { answer: command.answer, error: (error as Error).message };
      }
    }
    case 'every': {
      const entry = indexes.get(command.index);
      if (!entry) return { answer: command.answer, matched: { rowids: new Float64Array(0), scores: new Float64Array(0) } };
      carryOut(entry, false);
      const { query, statistics } = command;
      return {
        answer: command.answer,
        matched: entry.index.everyMatch({ ...query, filter: entry.filters.forSearch(entry.index, query) }, statistics),
      };
    }
    case 'held': {
      const entry = indexes.get(command.index);
      if (!entry) return { answer: command.answer, held: new Uint8Array(command.rowids.length * command.terms.length) };
      carryOut(entry, false);
      return { answer: command.answer, held: entry.index.termsHeld(command.rowids, command.terms, command.field) };
    }
    case 'sync':
      for (const entry of indexes.values()) carryOut(entry, true);
      return { search: command.search, total: 0, hits: NO_HITS };
    case 'search': {
      const entry = indexes.get(command.index);
      if (!entry) return { search: command.search, total: 0, hits: NO_HITS };
      carryOut(entry, false);
      const { query, statistics } = command;
      const othersBest = () => sharedBest.othersBest(command.search);
      const result = entry.index.search({ ...query, filter: entry.filters.forSearch(entry.index, query), othersBest }, statistics);
      sharedBest.publish(
        command.search,
        result.hits.map((hit) => hit.score),
      );
      const hits = new Float64Array(2 * result.hits.length);
      result.hits.forEach(({ rowid, score }, index) => {
        hits[2 * index] = rowid;
        hits[2 * index + 1] = score;
      });
      return { search: command.search, total: result.total, hits, ...(result.facets ? { facets: result.facets } : {}) };
    }
  }
}

parentPort!.on('message', (command: SearchThreadCommand) => {
  let reply: SearchThreadReply | undefined;
  try {
    reply = handle(command);
  } catch (error) {
    reply = { failed: (error as Error).message };
  }
  if (reply) parentPort!.postMessage(reply);
});
