import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { DocumentEmbeddings } from '../../../src/embeddings/document-embeddings.js';
import { OpenAiEmbedder } from '../../../src/embeddings/openai-embedder.js';
import { standInVector, startStandInEmbedder } from '../../../src/embeddings/stand-in/stand-in-embedder.js';
import { INDEX_UPKEEP } from '../../../src/search/corpus/index-keeper.js';
import { SqliteCorpus } from '../../../src/search/sqlite-corpus.js';
import { documentsOf, standInEmbeddings, tempDir } from '../../support/helper.js';

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
    const result = await corpus.search({ terms: ['car'], field: { kind: 'all' }, filters: [], topK: 10, semantic: { mode: 'semantic', vector } });
    return result.hits.map((hit) => hit.docId).sort();
  };

  it('is written on close and read back; what another connection wrote meanwhile is caught up', async () => {
    const dir = tempDir();
    try {
      const first = open(dir.path);
      await first.ingestDocuments(documentsOf(DOCUMENTS));
      assert.deepEqual(await nearCar(first), ['auto', 'truck']);
      await first.close();
      assert.ok(existsSync(join(dir.path, 'vectors', 'vectors.usearch')));
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

  it('after a crash between writing the index and its state, or with an unreadable index, serves the same results', async () => {
    const dir = tempDir();
    try {
      const first = open(dir.path);
      await first.ingestDocuments(documentsOf(DOCUMENTS));
      await first.prepareSearch();
      await first.close();
      const state = JSON.parse(readFileSync(join(dir.path, 'vectors', 'vectors.json'), 'utf8'));
      writeFileSync(join(dir.path, 'vectors', 'vectors.json'), JSON.stringify({ ...state, highestRowid: 0, removalsSeen: 0 }));
      const older = open(dir.path);
      assert.deepEqual(await nearCar(older), ['auto', 'truck'], 'rows caught up again replace themselves');
      await older.close();
      writeFileSync(join(dir.path, 'vectors', 'vectors.usearch'), 'not an index');
      const broken = open(dir.path);
      assert.deepEqual(await nearCar(broken), ['auto', 'truck']);
      assert.ok(warnings.some((warning) => /could not be read/.test(warning)));
      await broken.close();
    } finally {
      dir.remove();
    }
  });
});
