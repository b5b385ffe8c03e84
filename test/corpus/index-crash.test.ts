import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { Manifest } from '../../src/corpus/index-segments.js';
import { INDEX_UPKEEP, SqliteCorpus } from '../../src/corpus/sqlite-corpus.js';
import { assertSameRankings, rankings } from '../support/corpus-rankings.js';
import { syntheticDocuments as documents, documentsOf, tempDir } from '../support/helper.js';
import { random } from '../support/random.js';

const WRITER = fileURLToPath(new URL('../support/index-writer.ts', import.meta.url));
const KILLS = 5;

/** The manifest's text, or undefined while there is none. */
function manifestText(dir: string): string | undefined {
  const path = join(dir, 'index', 'manifest.json');
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** Runs index-writer.ts on `dir` until it has written its index to disk, then `afterMs` more, and kills it with SIGKILL. */
async function writeThenKill(dir: string, threads: number, afterMs: number): Promise<void> {
  const before = manifestText(dir);
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir, String(threads)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (let waited = 0; [before, undefined].includes(manifestText(dir)); waited += 10) {
      if (waited > 20_000 || child.exitCode !== null) throw new Error(`the writer wrote no index:\n${errors}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, afterMs));
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

/** The same documents in a fresh folder (a copy of the corpus file, no index): the index built from them. */
async function builtFromTheDocuments(dir: string, into: string) {
  mkdirSync(into);
  const source = new Database(join(dir, 'corpus.sqlite'), { readonly: true });
  source.exec(`VACUUM INTO '${join(into, 'corpus.sqlite')}'`);
  source.close();
  const corpus = new SqliteCorpus(into);
  try {
    return await rankings(corpus);
  } finally {
    await corpus.close();
  }
}

for (const threads of [1, 2]) {
  describe(`SqliteCorpus index on disk, killed while writing it (${threads === 1 ? 'in its own thread' : 'two search threads'})`, () => {
    it('starts again from a whole index on disk, or builds one, and ranks as the documents it holds say', async (t) => {
      const dir = tempDir();
      const upkeep = { ...INDEX_UPKEEP, persistRows: 1, persistQuietMs: 0, persistIntervalMs: 0, searchThreads: threads, threadedRows: 0 };
      const next = random(threads);
      const origins: string[] = [];
      let unnamed = 0;
      try {
        const seed = new SqliteCorpus(dir.path);
        await seed.ingestDocuments(documentsOf(documents(20_000, 71)));
        await seed.close();
        for (let kill = 0; kill < KILLS; kill++) {
          await writeThenKill(dir.path, threads, Math.floor(next() * 300));
          const manifest = JSON.parse(readFileSync(join(dir.path, 'index', 'manifest.json'), 'utf8')) as Manifest;
          const named = new Set(['manifest.json', ...manifest.segments.map((segment) => segment.file)]);
          // A segment no manifest names yet: the kill came while a write was under way.
          if (readdirSync(join(dir.path, 'index')).some((file) => !named.has(file))) unnamed++;
          const expected = await builtFromTheDocuments(dir.path, join(dir.path, `reference-${kill}`));
          const restarted = new SqliteCorpus(dir.path, upkeep);
          try {
            origins.push(await restarted.prepareSearch());
            assertSameRankings(await rankings(restarted), expected);
          } finally {
            await restarted.close();
          }
        }
        assert.ok(origins.includes('segments'), `read back from disk at least once: ${origins.join(', ')}`);
        // Whether a kill lands mid-write is chance; the rankings above hold either way.
        t.diagnostic(`killed ${KILLS} times, ${unnamed} of them during a write; started from ${origins.join(', ')}`);
      } finally {
        dir.remove();
      }
    });
  });
}
