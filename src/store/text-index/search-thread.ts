import { parentPort, workerData } from 'node:worker_threads';
import { collectAndRelease } from '../../release-memory.js';
import { FilterBitmaps } from './filter-bitmaps.js';
import type { SearchThreadCommand, SearchThreadReply, SearchThreadData } from './search-threads.js';
import { unpackDocuments } from './packed-documents.js';
import { TextIndex } from './text-index.js';

// One search thread (see SearchThreads): holds its share of the documents of each ShardedIndex,
// as a TextIndex, and searches it with the whole corpus's statistics the main thread sends.
const { queued } = workerData as SearchThreadData;
/** Filter bitmaps kept per index, as SqliteCorpus keeps them for an index of its own. */
const FILTER_CACHE_ENTRIES = 32;
const indexes = new Map<number, { index: TextIndex; filters: FilterBitmaps }>();

function indexFor(id: number): { index: TextIndex; filters: FilterBitmaps } {
  let entry = indexes.get(id);
  if (!entry) indexes.set(id, (entry = { index: new TextIndex(), filters: new FilterBitmaps(FILTER_CACHE_ENTRIES) }));
  return entry;
}

function handle(command: SearchThreadCommand): SearchThreadReply | undefined {
  switch (command.kind) {
    case 'add': {
      const { index, filters } = indexFor(command.index);
      index.add(unpackDocuments(command));
      filters.clear();
      return undefined;
    }
    case 'remove': {
      const { index, filters } = indexFor(command.index);
      index.remove(command.rowid, command.terms);
      filters.clear();
      return undefined;
    }
    case 'trim':
      indexFor(command.index).index.trim();
      collectAndRelease();
      return undefined;
    case 'drop':
      indexes.delete(command.index);
      collectAndRelease();
      return undefined;
    case 'sync':
      return { search: command.search, total: 0, hits: [] };
    case 'search': {
      const entry = indexes.get(command.index);
      if (!entry) return { search: command.search, total: 0, hits: [] };
      const { query, statistics } = command;
      const result = entry.index.search({ ...query, filter: entry.filters.of(entry.index, query.filters) }, statistics);
      return { search: command.search, total: result.total, hits: result.hits.map(({ rowid, score }) => ({ rowid, score })) };
    }
  }
}

parentPort!.on('message', (command: SearchThreadCommand) => {
  let reply: SearchThreadReply | undefined;
  try {
    reply = handle(command);
  } catch (error) {
    reply = { failed: (error as Error).message };
  } finally {
    if (command.kind === 'add') {
      Atomics.sub(queued, 0, 1);
      Atomics.notify(queued, 0);
    }
  }
  if (reply) parentPort!.postMessage(reply);
});
