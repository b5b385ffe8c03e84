import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SearchReplica } from '../../src/corpus/replica.js';
import { INDEX_UPKEEP } from '../../src/corpus/sqlite-corpus.js';
import type { ChangeFeed, DocumentRecord } from '../../src/documents/document-store.js';
import { postgresChangeFeed } from '../../src/documents/postgres-documents.js';
import { PostgresDatabase } from '../../src/platform/postgres-database.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { assertSameRankings, freshCorpus, rankings } from '../support/corpus-rankings.js';
import { syntheticDocuments as documents, documentsOf, tempDir } from '../support/helper.js';
import { createTestDatabase, PG_TEST_OPTIONS, SKIP_POSTGRES } from '../support/pg.js';

/** Its index written as soon as it is served, whatever its size. */
const UPKEEP = { ...INDEX_UPKEEP, persistRows: 1, persistQuietMs: 0, persistIntervalMs: 0 };

/** A feed that counts the changes it hands out. */
function counted(feed: ChangeFeed): ChangeFeed & { read: number } {
  const counting = {
    read: 0,
    identity: () => feed.identity(),
    async changesSince(seq: number, limit: number) {
      const page = await feed.changesSince(seq, limit);
      counting.read += page.changes.length;
      return page;
    },
  };
  return counting;
}

async function writeThrough(url: string, work: (store: PostgresStore) => Promise<void>): Promise<void> {
  const store = await PostgresStore.open({ url, ...PG_TEST_OPTIONS });
  try {
    await work(store);
  } finally {
    await store.close();
  }
}

/** Waits until the replica in `dir` has written its index to disk. */
async function indexWritten(dir: string): Promise<void> {
  for (let waited = 0; waited < 10_000 && !existsSync(join(dir, 'index', 'manifest.json')); waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(existsSync(join(dir, 'index', 'manifest.json')), 'the replica wrote its index');
}

describe('search replica kept on disk', { skip: SKIP_POSTGRES }, () => {
  const databases: Array<Awaited<ReturnType<typeof createTestDatabase>>> = [];
  const connections: PostgresDatabase[] = [];
  const feedOf = (url: string) => {
    const db = new PostgresDatabase({ url, ...PG_TEST_OPTIONS });
    connections.push(db);
    return counted(postgresChangeFeed(db));
  };

  before(async () => {
    for (let count = 0; count < 2; count++) {
      const database = await createTestDatabase();
      await writeThrough(database.url, async () => undefined);
      databases.push(database);
    }
  });

  after(async () => {
    await Promise.all(connections.map((db) => db.end()));
    await Promise.all(databases.map((database) => database.drop()));
  });

  it('starts from its corpus, index and feed position: reads only what changed while stopped, and ranks as a fresh corpus', async () => {
    const dir = tempDir();
    const base = join(dir.path, 'replica');
    try {
      const first = documents(60, 51);
      await writeThrough(databases[0].url, (store) => store.documents.ingestDocuments(documentsOf(first)).then(() => undefined));
      const firstFeed = feedOf(databases[0].url);
      const replica = new SearchReplica(firstFeed, { pollMs: 50, searchThreads: 1, dir: base, upkeep: UPKEEP });
      await replica.prepareSearch();
      assert.equal(firstFeed.read, 60);
      await indexWritten(base);
      await replica.close();

      const late = documents(10, 52, 'late');
      await writeThrough(databases[0].url, async (store) => {
        await store.documents.ingestDocuments(documentsOf(late));
        await store.documents.deleteDocument('doc-4');
      });
      const expected: DocumentRecord[] = [...first.filter((document) => document.docId !== 'doc-4'), ...late];
      const feed = feedOf(databases[0].url);
      const restarted = new SearchReplica(feed, { pollMs: 50, searchThreads: 1, dir: base, upkeep: UPKEEP });
      try {
        assert.equal(await restarted.prepareSearch(), 'segments');
        assert.equal(feed.read, 11, 'the ten documents added and the one deleted');
        const corpus = await restarted.corpus();
        assertSameRankings(await rankings(corpus), await freshCorpus(expected));
      } finally {
        await restarted.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('takes over a folder its owner left without releasing it: an ended process, or this process id before a container restart', async () => {
    const dir = tempDir();
    const base = join(dir.path, 'replica');
    try {
      for (const owner of [process.pid, 2 ** 22 + 1]) {
        mkdirSync(base, { recursive: true });
        writeFileSync(join(base, 'owner.pid'), String(owner));
        const replica = new SearchReplica(feedOf(databases[0].url), { pollMs: 50, searchThreads: 1, dir: base, upkeep: UPKEEP });
        try {
          await replica.prepareSearch();
          assert.ok(existsSync(join(base, 'corpus.sqlite')), `taken over from ${owner}`);
          assert.equal(readFileSync(join(base, 'owner.pid'), 'utf8'), String(process.pid));
          assert.ok(!existsSync(`${base}-2`));
        } finally {
          await replica.close();
        }
        assert.ok(!existsSync(join(base, 'owner.pid')), 'released on close');
      }
    } finally {
      dir.remove();
    }
  });

  it('starts afresh when pointed at another database, and takes a folder of its own while another replica holds one', async () => {
    const dir = tempDir();
    const base = join(dir.path, 'replica');
    try {
      const holder = new SearchReplica(feedOf(databases[0].url), { pollMs: 50, searchThreads: 1, dir: base, upkeep: UPKEEP });
      await holder.prepareSearch();
      await holder.close();

      const other = documents(12, 61, 'other');
      await writeThrough(databases[1].url, (store) => store.documents.ingestDocuments(documentsOf(other)).then(() => undefined));
      const feed = feedOf(databases[1].url);
      const moved = new SearchReplica(feed, { pollMs: 50, searchThreads: 1, dir: base, upkeep: UPKEEP });
      // A second replica on the same folder, as a second instance on this machine would be.
      const beside = new SearchReplica(feedOf(databases[1].url), { pollMs: 50, searchThreads: 1, dir: base, upkeep: UPKEEP });
      try {
        await moved.prepareSearch();
        assert.equal(feed.read, 12, 'the other database read from its start');
        assertSameRankings(await rankings(await moved.corpus()), await freshCorpus(other));
        await beside.prepareSearch();
        assert.ok(existsSync(join(`${base}-2`, 'corpus.sqlite')), 'the second replica keeps its own folder');
        assertSameRankings(await rankings(await beside.corpus()), await freshCorpus(other));
      } finally {
        await moved.close();
        await beside.close();
      }
    } finally {
      dir.remove();
    }
  });
});
