import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { corpusMigrations } from '../../src/corpus/corpus-schema.js';
import { INDEX_UPKEEP } from '../../src/corpus/index-keeper.js';
import { SqliteCorpus } from '../../src/corpus/sqlite-corpus.js';
import type { DocumentRecord } from '../../src/documents/document-store.js';
import { DocumentEmbeddings } from '../../src/embeddings/document-embeddings.js';
import { OpenAiEmbedder } from '../../src/embeddings/openai-embedder.js';
import { standInVector, startStandInEmbedder } from '../../src/embeddings/stand-in/stand-in-embedder.js';
import { documentsOf, standInEmbeddings, tempDir } from '../support/helper.js';

const DOCUMENTS: DocumentRecord[] = [
  { docId: 'auto', title: 'Automobile recall', text: 'Vehicles recalled.', metadata: {} },
  { docId: 'truck', title: 'Truck fleet', text: 'A truck garage.', metadata: {} },
  { docId: 'privacy', title: 'Personal data', text: 'Confidential records.', metadata: {} },
];

describe('the vector index beside a corpus file', () => {
  let standIn: Awaited<ReturnType<typeof startStandInEmbedder>>;
  let embeddings: DocumentEmbeddings;
  const warnings: string[] = [];
  before(async () => {
    standIn = await startStandInEmbedder();
    embeddings = new DocumentEmbeddings(new OpenAiEmbedder(standInEmbeddings(standIn.url, standIn.dimensions)), 2000);
  });
  after(async () => standIn.close());

  const open = (dir: string) => new SqliteCorpus(dir, INDEX_UPKEEP, (message) => warnings.push(message), embeddings);
  const nearCar = async (corpus: SqliteCorpus) => {
    const vector = Float32Array.from(standInVector('car', standIn.dimensions));
    const result = await corpus.search({ terms: ['car'], field: { kind: 'all' }, filters: [], topK: 10, ranking: { mode: 'semantic', vector } });
    return result.hits.map((hit) => hit.docId).sort();
  };

  /** The index file the state on disk names. */
  const namedFile = (dir: string) => join(dir, 'vectors', JSON.parse(readFileSync(join(dir, 'vectors', 'vectors.json'), 'utf8')).file.name);
  const keptFiles = (dir: string) => (existsSync(join(dir, 'vectors')) ? readdirSync(join(dir, 'vectors')).sort() : []);
  /** What the folder holds when only the state and the file it names are left. */
  const stateAndNamedFile = (dir: string) => ['vectors.json', basename(namedFile(dir))].sort();
  /** DOCUMENTS ingested, searched and closed: a folder holding their vector index as a stop writes it. */
  const writeIndexOfDocuments = async (dir: string) => {
    const corpus = open(dir);
    await corpus.ingestDocuments(documentsOf(DOCUMENTS));
    await corpus.prepareSearch();
    await corpus.close();
  };
  /** DOCUMENTS ingested by another connection (the CLI), which builds no vector index. */
  const ingestWithCli = async (dir: string) => {
    const cli = open(dir);
    await cli.ingestDocuments(documentsOf(DOCUMENTS));
    await cli.close();
  };

  /** A corpus file holding DOCUMENTS' vectors and no vector index (a CLI ingest), opened as a start that builds one on a worker. */
  const startBuildingOnWorker = async (dir: string) => {
    await ingestWithCli(dir);
    return new SqliteCorpus(dir, { ...INDEX_UPKEEP, vectorBuildInPlaceRows: 0 }, (message) => warnings.push(message), embeddings);
  };

  it('is written on close and read back; what another connection wrote meanwhile is caught up', async () => {
    const dir = tempDir();
    try {
      const first = open(dir.path);
      await first.ingestDocuments(documentsOf(DOCUMENTS));
      assert.deepEqual(await nearCar(first), ['auto', 'truck']);
      await first.close();
      assert.ok(existsSync(namedFile(dir.path)));
      // Another process (the CLI) writes while the service is down.
      const cli = open(dir.path);
      await cli.ingestDocuments(documentsOf([{ docId: 'lorry-car', title: 'Car and lorry', text: 'car', metadata: {} }]));
      await cli.deleteDocument('truck');
      await cli.close();
      const second = open(dir.path);
      await second.prepareSearch();
      assert.deepEqual(await nearCar(second), ['auto', 'lorry-car']);
      await second.close();
    } finally {
      dir.remove();
    }
  });

  it('with many stored vectors and none on disk, a start builds the index on a worker while serving; the next start reads it back', async () => {
    const dir = tempDir();
    try {
      const starting = await startBuildingOnWorker(dir.path);
      assert.ok(!existsSync(join(dir.path, 'vectors')), 'an ingest alone builds no vector index');
      await starting.prepareSearch();
      assert.equal(starting.semanticReady(), false, 'the start answers before the vector index is built');
      assert.ok(warnings.some((warning) => /built from up to 3 stored vectors on a worker/.test(warning)));
      await starting.ingestDocuments(documentsOf([{ docId: 'lorry-car', title: 'Car and lorry', text: 'car', metadata: {} }]));
      await starting.deleteDocument('truck');
      assert.deepEqual(await nearCar(starting), ['auto', 'lorry-car'], 'a search waits for the build, then catches up');
      assert.equal(starting.semanticReady(), true);
      await starting.close();
      assert.deepEqual(keptFiles(dir.path), stateAndNamedFile(dir.path), 'the state and the one file it names');
      const warned = warnings.length;
      const next = open(dir.path);
      await next.prepareSearch();
      assert.equal(next.semanticReady(), true, 'read back from disk');
      assert.deepEqual(await nearCar(next), ['auto', 'lorry-car']);
      assert.equal(warnings.length, warned, 'read back without a warning');
      await next.close();
    } finally {
      dir.remove();
    }
  });

  it('a CLI ingest that writes its indexes leaves a start with nothing to build: both are read back, semantic ready at once', async () => {
    const dir = tempDir();
    try {
      // Every index written, whatever its size (a service writes the text index past 50,000 documents).
      const upkeep = { ...INDEX_UPKEEP, vectorBuildInPlaceRows: 0, persistRows: 0 };
      const cli = new SqliteCorpus(dir.path, upkeep, (message) => warnings.push(message), embeddings);
      await cli.ingestDocuments(documentsOf(DOCUMENTS));
      await cli.writeIndexes();
      await cli.close();
      assert.deepEqual(keptFiles(dir.path), stateAndNamedFile(dir.path), 'the vector index and its state');
      const warned = warnings.length;
      const starting = new SqliteCorpus(dir.path, upkeep, (message) => warnings.push(message), embeddings);
      assert.equal(await starting.prepareSearch(), 'segments', 'the text index read back');
      assert.equal(starting.semanticReady(), true, 'no build on a worker');
      assert.equal(warnings.length, warned, 'nothing to warn of');
      assert.deepEqual(await nearCar(starting), ['auto', 'truck']);
      await starting.close();
    } finally {
      dir.remove();
    }
  });

  it('vectors stored by an older schema (a WITHOUT ROWID table) are kept through the upgrade, and found', async () => {
    const dir = tempDir();
    try {
      await ingestWithCli(dir.path);
      const old = new Database(join(dir.path, 'corpus.sqlite'));
      old.exec(`CREATE TABLE old_embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID;
        INSERT INTO old_embeddings SELECT key, vector FROM embeddings;
        DROP TABLE embeddings;
        ALTER TABLE old_embeddings RENAME TO embeddings;`);
      old.pragma(`user_version = ${corpusMigrations.length - 1}`);
      old.close();
      const corpus = open(dir.path);
      try {
        assert.deepEqual(await nearCar(corpus), ['auto', 'truck']);
        const upgraded = new Database(join(dir.path, 'corpus.sqlite'), { readonly: true });
        const schema = upgraded.prepare("SELECT sql FROM sqlite_master WHERE name = 'embeddings'").pluck().get() as string;
        const stored = upgraded.prepare('SELECT count(*) FROM embeddings').pluck().get();
        upgraded.close();
        assert.match(schema, /id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE/);
        assert.equal(stored, DOCUMENTS.length);
      } finally {
        await corpus.close();
      }
    } finally {
      dir.remove();
    }
  });

  it('closed while its index is built on a worker: stops the worker and leaves no partial file', async () => {
    const dir = tempDir();
    try {
      const starting = await startBuildingOnWorker(dir.path);
      await starting.prepareSearch();
      await starting.close();
      // Stopped, or (on a fast machine) finished and adopted first: either way, nothing half-written.
      const left = keptFiles(dir.path);
      assert.ok(left.length === 0 || left.join() === stateAndNamedFile(dir.path).join(), `left: ${left.join()}`);
      const next = open(dir.path);
      assert.deepEqual(await nearCar(next), ['auto', 'truck'], 'the next start builds it');
      await next.close();
    } finally {
      dir.remove();
    }
  });

  it('shared by two processes (serve --workers): each writes a file of its own, and the folder keeps the one its state names', async () => {
    const dir = tempDir();
    try {
      await ingestWithCli(dir.path);
      const [first, second] = [open(dir.path), open(dir.path)];
      await Promise.all([first.prepareSearch(), second.prepareSearch()]);
      await first.close();
      const firstFile = namedFile(dir.path);
      await second.close();
      assert.notEqual(namedFile(dir.path), firstFile, 'the later close wrote a file of its own');
      assert.deepEqual(keptFiles(dir.path), stateAndNamedFile(dir.path));
      const next = open(dir.path);
      assert.deepEqual(await nearCar(next), ['auto', 'truck']);
      await next.close();
    } finally {
      dir.remove();
    }
  });

  it('reads back a folder whose state names no file (vectors.usearch, as written before files were named)', async () => {
    const dir = tempDir();
    try {
      await writeIndexOfDocuments(dir.path);
      const statePath = join(dir.path, 'vectors', 'vectors.json');
      const state = JSON.parse(readFileSync(statePath, 'utf8'));
      renameSync(namedFile(dir.path), join(dir.path, 'vectors', 'vectors.usearch'));
      writeFileSync(statePath, JSON.stringify({ ...state, file: { bytes: state.file.bytes, fingerprint: state.file.fingerprint } }));
      const warned = warnings.length;
      const upgraded = open(dir.path);
      await upgraded.prepareSearch();
      assert.deepEqual(await nearCar(upgraded), ['auto', 'truck']);
      assert.equal(warnings.length, warned, 'read back, not built again');
      await upgraded.ingestDocuments(documentsOf([{ docId: 'lorry-car', title: 'Car and lorry', text: 'car', metadata: {} }]));
      assert.deepEqual(await nearCar(upgraded), ['auto', 'lorry-car', 'truck']);
      await upgraded.close();
      assert.deepEqual(keptFiles(dir.path), stateAndNamedFile(dir.path), 'the unnamed file is gone once a named one is written');
    } finally {
      dir.remove();
    }
  });

  it('after a crash between writing the index and its state, or with an unreadable index, serves the same results', async () => {
    const dir = tempDir();
    try {
      await writeIndexOfDocuments(dir.path);
      const statePath = join(dir.path, 'vectors', 'vectors.json');
      const state = JSON.parse(readFileSync(statePath, 'utf8'));
      writeFileSync(statePath, JSON.stringify({ ...state, highestRowid: 0, removalsSeen: 0 }));
      const older = open(dir.path);
      assert.deepEqual(await nearCar(older), ['auto', 'truck'], 'rows caught up again replace themselves');
      await older.close();
      writeFileSync(namedFile(dir.path), 'not an index');
      const broken = open(dir.path);
      assert.deepEqual(await nearCar(broken), ['auto', 'truck']);
      assert.ok(warnings.some((warning) => /could not be read/.test(warning)));
      await broken.close();
    } finally {
      dir.remove();
    }
  });
});
