import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Manifest } from '../../src/corpus/index-segments.js';
import { type IndexUpkeep, SqliteCorpus } from '../../src/corpus/sqlite-corpus.js';
import type { DocumentRecord } from '../../src/documents/document-store.js';
import type { IndexOrigin } from '../../src/search/document-index.js';
import { assertSameRankings, freshCorpus, INDEX_MODES, rankings } from '../support/corpus-rankings.js';
import { syntheticDocuments as documents, documentsOf, tempDir } from '../support/helper.js';

/** Written as soon as it is served, whatever its size. */
const PERSIST_AT_ONCE = { persistRows: 1, persistQuietMs: 0, persistIntervalMs: 0 };

function readManifest(dir: string): Manifest | undefined {
  const path = join(dir, 'index', 'manifest.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Manifest) : undefined;
}

/** The manifest, once one naming other segments than `previous` has been written. */
async function manifestWritten(dir: string, previous?: Manifest): Promise<Manifest> {
  const named = (manifest: Manifest | undefined) => manifest?.segments.map((segment) => segment.file).join();
  for (let waited = 0; waited < 10_000; waited += 20) {
    const manifest = readManifest(dir);
    if (manifest && named(manifest) !== named(previous)) return manifest;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no manifest was written');
}

/** A corpus of `first` whose index has been written to disk; closed. */
async function persistedCorpus(dir: string, upkeep: IndexUpkeep, first: DocumentRecord[]): Promise<Manifest> {
  const corpus = new SqliteCorpus(dir, upkeep);
  try {
    await corpus.ingestDocuments(documentsOf(first));
    assert.equal(await corpus.prepareSearch(), 'corpus');
    return await manifestWritten(dir);
  } finally {
    await corpus.close();
  }
}

/** Opens the corpus as a start does (the index prepared), and hands it to `check` with where its index came from. */
async function started(dir: string, upkeep: IndexUpkeep, check: (corpus: SqliteCorpus, origin: IndexOrigin) => Promise<void>): Promise<void> {
  const corpus = new SqliteCorpus(dir, upkeep);
  try {
    await check(corpus, await corpus.prepareSearch());
  } finally {
    await corpus.close();
  }
}

for (const { name, upkeep: modeUpkeep } of INDEX_MODES) {
  const upkeep = { ...modeUpkeep, ...PERSIST_AT_ONCE };
  const segmentsPerIndex = upkeep.searchThreads > 1 ? upkeep.searchThreads + 1 : 1;

  describe(`SqliteCorpus index on disk, ${name}`, () => {
    it('writes at close an index that was still waiting to be written, so that the next start reads it', async () => {
      const dir = tempDir();
      try {
        const waiting = { ...upkeep, persistRows: 1, persistQuietMs: 3_600_000, persistIntervalMs: 3_600_000 };
        const first = documents(60, 23);
        const writer = new SqliteCorpus(dir.path);
        await writer.ingestDocuments(documentsOf(first));
        await writer.close();
        await started(dir.path, waiting, async (_corpus, origin) => {
          assert.equal(origin, 'corpus');
          assert.equal(readManifest(dir.path), undefined, 'not written before the stop');
        });
        assert.equal(readManifest(dir.path)?.highestRowid, 60, 'written at close');
        await started(dir.path, waiting, async (corpus, origin) => {
          assert.equal(origin, 'segments');
          assertSameRankings(await rankings(corpus), await freshCorpus(first));
        });
      } finally {
        dir.remove();
      }
    });

    it('starts from the index it wrote, caught up with what was ingested and deleted while stopped, and writes the new state', async () => {
      const dir = tempDir();
      try {
        const first = documents(60, 21);
        const written = await persistedCorpus(dir.path, upkeep, first);
        assert.equal(written.highestRowid, 60);
        assert.equal(written.segments.length, segmentsPerIndex);

        const writer = new SqliteCorpus(dir.path);
        const late = documents(10, 22, 'late');
        const rewritten = { ...first[5], text: `${first[5].text} glacier ember` };
        await writer.ingestDocuments(documentsOf([...late, rewritten]));
        await writer.deleteDocument('doc-3');
        await writer.close();
        const expected = [...first.filter((document) => !['doc-3', 'doc-5'].includes(document.docId)), ...late, rewritten];

        await started(dir.path, upkeep, async (corpus, origin) => {
          assert.equal(origin, 'segments');
          assert.equal(corpus.indexStatistics().liveDocuments, expected.length);
          assertSameRankings(await rankings(corpus), await freshCorpus(expected));
          const caughtUp = await manifestWritten(dir.path, written);
          assert.equal(caughtUp.highestRowid, 71);
          assert.deepEqual(
            readdirSync(join(dir.path, 'index')).sort(),
            ['manifest.json', ...caughtUp.segments.map((segment) => segment.file)].sort(),
          );
        });
        await started(dir.path, upkeep, async (corpus, origin) => {
          assert.equal(origin, 'segments');
          assertSameRankings(await rankings(corpus), await freshCorpus(expected));
        });
      } finally {
        dir.remove();
      }
    });

    it('writes an index that never stays unchanged for persistQuietMs once persistIntervalMs after its first change', async () => {
      const dir = tempDir();
      const corpus = new SqliteCorpus(dir.path, { ...upkeep, persistQuietMs: 300, persistIntervalMs: 1000 });
      try {
        await corpus.ingestDocuments(documentsOf(documents(30, 35)));
        await corpus.prepareSearch();
        const first = await manifestWritten(dir.path);
        // A document every 100 ms, each searched for, so the index changes faster than it can rest.
        const started = Date.now();
        let later: Manifest | undefined;
        for (let number = 0; Date.now() - started < 3000 && !later; number++) {
          await corpus.ingestDocuments(documentsOf(documents(1, 36 + number, `trickle-${number}`)));
          await rankings(corpus);
          const manifest = readManifest(dir.path);
          if (manifest && manifest.highestRowid > first.highestRowid) later = manifest;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.ok(later, 'written while the documents kept coming');
        assert.ok(Date.now() - started < 2500, `written ${Date.now() - started} ms after the first change`);
      } finally {
        await corpus.close();
        dir.remove();
      }
    });

    it('tells of a write that failed, serves on, and writes once it can', async () => {
      const dir = tempDir();
      const warnings: string[] = [];
      // A file where the folder of segments goes: every write fails until it is removed.
      writeFileSync(join(dir.path, 'index'), 'in the way');
      const corpus = new SqliteCorpus(dir.path, upkeep, (message, error) => warnings.push(`${message}: ${(error as Error).message}`));
      try {
        const first = documents(30, 37);
        await corpus.ingestDocuments(documentsOf(first));
        await corpus.prepareSearch();
        for (let waited = 0; warnings.length === 0 && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
        assert.match(warnings[0] ?? '', /could not write the search index to disk.*(EEXIST|ENOTDIR)/);
        assertSameRankings(await rankings(corpus), await freshCorpus(first));
        rmSync(join(dir.path, 'index'));
        await corpus.ingestDocuments(documentsOf(documents(1, 38, 'late')));
        await rankings(corpus);
        assert.equal((await manifestWritten(dir.path)).highestRowid, 31);
      } finally {
        await corpus.close();
        dir.remove();
      }
    });

    for (const harm of ['torn', 'damaged', 'missing'] as const) {
      it(`builds the index from the corpus, never serving a ${harm} segment, and writes a sound one in its place`, async () => {
        const dir = tempDir();
        try {
          const first = documents(50, 31);
          const written = await persistedCorpus(dir.path, upkeep, first);
          const path = join(dir.path, 'index', written.segments[written.segments.length - 1].file);
          if (harm === 'torn') truncateSync(path, written.segments[written.segments.length - 1].bytes - 100);
          if (harm === 'damaged') {
            const bytes = readFileSync(path);
            bytes[bytes.length - 200] ^= 0x01;
            writeFileSync(path, bytes);
          }
          if (harm === 'missing') writeFileSync(join(dir.path, 'index', 'manifest.json'), JSON.stringify({ ...written, segments: [] }));
          await started(dir.path, upkeep, async (corpus, origin) => {
            assert.equal(origin, 'corpus');
            assertSameRankings(await rankings(corpus), await freshCorpus(first));
            await manifestWritten(dir.path, written);
          });
          await started(dir.path, upkeep, async (corpus, origin) => {
            assert.equal(origin, 'segments');
            assertSameRankings(await rankings(corpus), await freshCorpus(first));
          });
        } finally {
          dir.remove();
        }
      });
    }

    it('builds the index from the corpus when the segments are of another corpus file, or deletions it missed have left the log', async () => {
      const dirs = [tempDir(), tempDir()];
      try {
        const first = documents(40, 41);
        await persistedCorpus(dirs[0].path, upkeep, first);
        // Another corpus file with as many rows: its row ids mean other documents.
        const other = documents(40, 42, 'other');
        const otherCorpus = new SqliteCorpus(dirs[1].path);
        await otherCorpus.ingestDocuments(documentsOf(other));
        await otherCorpus.close();
        cpSync(join(dirs[0].path, 'index'), join(dirs[1].path, 'index'), { recursive: true });
        await started(dirs[1].path, upkeep, async (corpus, origin) => {
          assert.equal(origin, 'corpus');
          assertSameRankings(await rankings(corpus), await freshCorpus(other));
        });

        const writer = new SqliteCorpus(dirs[0].path);
        await writer.deleteDocument('doc-1');
        await writer.deleteDocument('doc-2');
        await writer.close();
        // As if both deletions had aged out of the log while the service was stopped.
        const raw = new Database(join(dirs[0].path, 'corpus.sqlite'));
        raw.exec('DELETE FROM removed_documents');
        raw.close();
        await started(dirs[0].path, upkeep, async (corpus, origin) => {
          assert.equal(origin, 'corpus');
          assertSameRankings(await rankings(corpus), await freshCorpus(first.filter((document) => !['doc-1', 'doc-2'].includes(document.docId))));
        });
      } finally {
        for (const dir of dirs) dir.remove();
      }
    });
  });
}
