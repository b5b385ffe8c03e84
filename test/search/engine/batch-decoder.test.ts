import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchDecoder } from '../../../src/search/engine/batch-decoder.js';
import { frequencyByte } from '../../../src/search/engine/postings.js';
import type { IndexedDocument } from '../../../src/search/engine/search-index.js';
import { writeVarint } from '../../../src/search/engine/term-vector.js';

/** Stored vectors of deterministic documents: per document, term ids ascending with title and text counts. */
function storedDocuments(count: number): Array<IndexedDocument & { counts: Map<number, [number, number]> }> {
  let state = 7;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  return Array.from({ length: count }, (_, index) => {
    const counts = new Map<number, [number, number]>();
    for (let word = 0; word < 3 + Math.floor(next() * 30); word++) {
      // Ids up to 300, some past one varint byte, skewed so that many documents share terms.
      const termId = 1 + Math.floor(300 * next() ** 3);
      const [title, text] = counts.get(termId) ?? [0, 0];
      counts.set(termId, next() < 0.2 ? [title + 1, text] : [title, text + 1]);
    }
    const bytes = new Uint8Array(counts.size * 15);
    let offset = 0;
    let previous = 0;
    for (const termId of [...counts.keys()].sort((a, b) => a - b)) {
      offset = writeVarint(bytes, offset, termId - previous);
      offset = writeVarint(bytes, offset, counts.get(termId)![0]);
      offset = writeVarint(bytes, offset, counts.get(termId)![1]);
      previous = termId;
    }
    return { rowid: 10 + 3 * index, titleLength: 1 + (index % 5), textLength: 20 + (index % 50), terms: bytes.slice(0, offset), counts };
  });
}

describe('BatchDecoder', () => {
  it("groups a batch's postings by term, terms ascending and each term's documents in order, in one step or two", () => {
    const documents = storedDocuments(200);
    const oneStep = new BatchDecoder().decode(documents, 1000);
    const twoSteps = new BatchDecoder();
    assert.deepEqual(twoSteps.group(twoSteps.decodeDocuments(documents, 1000)), oneStep);
    // A decoder reused for a next batch starts from clean counts.
    assert.deepEqual(twoSteps.decode(documents.slice(50), 0), new BatchDecoder().decode(documents.slice(50), 0));

    assert.deepEqual(
      [...oneStep.rowids],
      documents.map((document) => document.rowid),
    );
    assert.deepEqual(
      [...oneStep.lengths],
      documents.flatMap((document) => [document.titleLength, document.textLength]),
    );
    assert.equal(
      oneStep.titleTotal,
      documents.reduce((sum, document) => sum + document.titleLength, 0),
    );
    assert.equal(
      oneStep.textTotal,
      documents.reduce((sum, document) => sum + document.textLength, 0),
    );
    const grouped = new Map<number, Array<[number, number]>>();
    let start = 0;
    oneStep.terms.forEach((termId, index) => {
      if (index > 0) assert.ok(termId > oneStep.terms[index - 1], 'terms ascending');
      const end = oneStep.ends[index];
      grouped.set(
        termId,
        Array.from({ length: end - start }, (_, offset) => [oneStep.documents[start + offset], oneStep.frequencies[start + offset]]),
      );
      start = end;
    });
    assert.equal(start, oneStep.documents.length);
    const expected = new Map<number, Array<[number, number]>>();
    documents.forEach((document, position) => {
      for (const [termId, [title, text]] of document.counts)
        expected.set(termId, [...(expected.get(termId) ?? []), [1000 + position, frequencyByte(title, text)]]);
    });
    assert.deepEqual(grouped, new Map([...expected].sort(([a], [b]) => a - b)));
  });
});
