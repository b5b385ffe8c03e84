import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packLabels } from '../../../src/search/engine/document-labels.js';
import type { SearchField } from '../../../src/search/engine/search-index.js';
import { runInSlices } from '../../../src/search/engine/segments/in-slices.js';
import { readSegment, SegmentError, type SegmentRecord, writeSegment } from '../../../src/search/engine/segments/segment-file.js';
import { TextIndex } from '../../../src/search/engine/text-index.js';
import { tempDir } from '../../support/helper.js';
import { corpus, encode, exhaustive, type PlainDocument, query } from '../../support/plain-corpus.js';
import { random } from '../../support/random.js';

const FIELDS: SearchField[] = ['all', 'title', 'text', 'metadata'];

function labelsOf(documents: PlainDocument[]) {
  return packLabels(documents.map((document) => ({ doc_id: `doc-${document.rowid}`, title: `Título ${document.rowid}` })));
}

/** Writes what `index` holds now (or what was captured earlier) to `path`. */
async function write(path: string, captured: ReturnType<TextIndex['captureSegment']>): Promise<SegmentRecord> {
  const written = await runInSlices(writeSegment(path, captured.scalars, captured.arrays));
  return { file: path, ...written };
}

function restore(record: SegmentRecord): TextIndex {
  const index = new TextIndex();
  index.restoreSegment(readSegment(record.file, record));
  return index;
}

/** Searches of every field, each ranked and counted as scoring every document held would. */
function assertExact(index: TextIndex, held: PlainDocument[], deleted: Set<number>, seed: number): void {
  const next = random(seed);
  for (let round = 0; round < 40; round++) {
    const field = FIELDS[round % FIELDS.length];
    const terms = query(next, 300);
    const topK = 1 + Math.floor(next() * 8);
    const expected = exhaustive(held, deleted, terms, () => true, field);
    const result = index.search({ terms, field, filter: null, topK });
    assert.equal(result.total, expected.length, `round ${round}, ${field}: total`);
    assert.deepEqual(
      result.hits.slice(0, topK).map((hit) => hit.rowid),
      expected.slice(0, topK).map((hit) => hit.rowid),
      `round ${round}, ${field}`,
    );
  }
}

function removeSome(index: TextIndex, documents: PlainDocument[], deleted: Set<number>, next: () => number, share: number): void {
  for (const document of documents) {
    if (deleted.has(document.rowid) || next() >= share) continue;
    deleted.add(document.rowid);
    index.remove(document.rowid, encode(document).terms);
  }
}

describe('index segments', () => {
  it('read back an index that ranks, counts, facets and labels as the one written: common and rare terms, deletions, fields past 16 bits', async () => {
    const dir = tempDir();
    try {
      const documents = corpus(6000, 61);
      documents.forEach((document, number) => {
        if (number % 211 === 0) document.textLength += 70_000;
        if (number % 223 === 0) document.titleLength += 4000;
      });
      const index = new TextIndex();
      index.add(documents.map(encode), labelsOf(documents));
      const deleted = new Set<number>();
      removeSome(index, documents, deleted, random(3), 0.1);
      // Searched first: the common terms' block bounds are written with them.
      assertExact(index, documents, deleted, 5);
      const restored = restore(await write(join(dir.path, 'whole.seg'), index.captureSegment()));
      assert.deepEqual(
        [restored.liveDocuments, restored.deletedDocuments, restored.highestRowid],
        [index.liveDocuments, index.deletedDocuments, index.highestRowid],
      );
      assertExact(restored, documents, deleted, 5);
      const next = random(9);
      for (let round = 0; round < 20; round++) {
        const search = { terms: query(next, 300), field: FIELDS[round % 4], filter: null, topK: 5, facets: [query(next, 1200), query(next, 40)] };
        assert.deepEqual(restored.search(search), index.search(search), `round ${round}`);
      }
      for (const document of documents.filter((_, number) => number % 500 === 7)) {
        assert.deepEqual(restored.labelOf(document.rowid), { docId: `doc-${document.rowid}`, title: `Título ${document.rowid}` });
      }
    } finally {
      dir.remove();
    }
  });

  it('hold the index as it was when captured, though documents came and went before the write; and take those changes after', async () => {
    const dir = tempDir();
    try {
      // Added in two batches, the index has room for 4,512 documents when captured, so the documents
      // added after it fill its arrays in place: the deletion bitmap, and the last bitmap word of
      // 4,100 documents, shared with the next 28.
      const documents = corpus(4500, 71);
      const first = documents.slice(0, 4100);
      const later = documents.slice(4100);
      const index = new TextIndex();
      index.add(first.slice(0, 3000).map(encode), labelsOf(first.slice(0, 3000)));
      index.add(first.slice(3000).map(encode), labelsOf(first.slice(3000)));
      const deleted = new Set<number>();
      const next = random(13);
      removeSome(index, first, deleted, next, 0.05);
      assertExact(index, first, deleted, 15);
      const captured = index.captureSegment();
      const deletedWhenCaptured = new Set(deleted);
      index.add(later.map(encode), labelsOf(later));
      removeSome(index, documents, deleted, next, 0.05);
      // Searches of the grown index extend the captured bounds in place before the write.
      assertExact(index, documents, deleted, 16);
      index.trim();
      const restored = restore(await write(join(dir.path, 'captured.seg'), captured));
      assertExact(restored, first, deletedWhenCaptured, 17);
      assert.equal(restored.labelOf(later[0].rowid), undefined);

      restored.add(later.map(encode), labelsOf(later));
      for (const rowid of deleted)
        if (!deletedWhenCaptured.has(rowid)) restored.remove(rowid, encode(documents.find((d) => d.rowid === rowid)!).terms);
      assertExact(restored, documents, deleted, 19);
      assert.deepEqual(restored.labelOf(later[10].rowid), index.labelOf(later[10].rowid));
    } finally {
      dir.remove();
    }
  });

  it('are refused when torn, damaged or missing, before anything in them is used', async () => {
    const dir = tempDir();
    try {
      const documents = corpus(3000, 81);
      const index = new TextIndex();
      index.add(documents.map(encode));
      const record = await write(join(dir.path, 'good.seg'), index.captureSegment());
      const bytes = readFileSync(record.file);
      const torn = join(dir.path, 'torn.seg');
      writeFileSync(torn, bytes.subarray(0, bytes.length >> 1));
      assert.throws(() => readSegment(torn, record), SegmentError);
      const damaged = join(dir.path, 'damaged.seg');
      const flipped = Buffer.from(bytes);
      flipped[flipped.length >> 1] ^= 0x10;
      writeFileSync(damaged, flipped);
      assert.throws(() => readSegment(damaged, record), /fails its checksum/);
      rmSync(record.file);
      assert.throws(() => readSegment(record.file, record), /cannot be read/);
    } finally {
      dir.remove();
    }
  });
});
