// Run as a process of its own by index-crash.test.ts, to be killed: opens the corpus in the folder
// given, with its index written to disk at every change, then changes it without end: a document
// added and searched for (so the index catches up, and is written again) every few milliseconds.
import { INDEX_UPKEEP, SqliteCorpus } from '../../src/corpus/sqlite-corpus.js';
import { syntheticDocuments as documents, documentsOf } from './helper.js';

const [dir, threads] = process.argv.slice(2);
const corpus = new SqliteCorpus(dir, {
  ...INDEX_UPKEEP,
  persistRows: 1,
  persistQuietMs: 0,
  persistIntervalMs: 0,
  searchThreads: Number(threads),
  threadedRows: 0,
});
await corpus.prepareSearch();
for (let number = 0; ; number++) {
  await corpus.ingestDocuments(documentsOf(documents(1, 1000 + number, `written-${number}`)));
  await corpus.search({ terms: ['river'], field: { kind: 'all' }, filters: [], topK: 5 });
  await new Promise((resolve) => setTimeout(resolve, 1 + (number % 7)));
}
