import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DocumentLabels, packLabels } from '../../../src/search/engine/document-labels.js';

const rows = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => ({ doc_id: `doc-${from + index}`, title: `title ${from + index}` }));

describe('DocumentLabels', () => {
  it('gives back each doc_id and title by position, across batches and growth, and after a trim', () => {
    const labels = new DocumentLabels();
    // Batches large enough to outgrow the first buffers several times.
    for (let from = 0; from < 30_000; from += 7_500) labels.add(from, packLabels(rows(from, 7_500)));
    assert.equal(labels.size, 30_000);
    for (const position of [0, 1, 7_499, 7_500, 22_222, 29_999]) {
      assert.deepEqual(labels.at(position), { docId: `doc-${position}`, title: `title ${position}` });
    }
    labels.trim();
    assert.deepEqual(labels.at(29_999), { docId: 'doc-29999', title: 'title 29999' });
    labels.add(30_000, packLabels(rows(30_000, 1)));
    assert.deepEqual(labels.at(30_000), { docId: 'doc-30000', title: 'title 30000' });
  });

  it('makes room for an expected size, keeping what it holds, and reads the same before and after a trim', () => {
    const labels = new DocumentLabels();
    labels.add(0, packLabels(rows(0, 100)));
    const expected = packLabels(rows(0, 20_000));
    labels.expect(20_000, expected.bytes.length);
    assert.deepEqual(labels.at(99), { docId: 'doc-99', title: 'title 99' });
    for (let from = 100; from < 20_000; from += 4_975) labels.add(from, packLabels(rows(from, 4_975)));
    assert.equal(labels.bytesUsed, expected.bytes.length);
    labels.trim();
    for (const position of [0, 99, 100, 12_345, 19_999]) {
      assert.deepEqual(labels.at(position), { docId: `doc-${position}`, title: `title ${position}` });
    }
    // Past the size expected, it grows as before.
    labels.add(20_000, packLabels(rows(20_000, 5_000)));
    assert.deepEqual(labels.at(24_999), { docId: 'doc-24999', title: 'title 24999' });
  });

  it('keeps any text as it was: other scripts, emoji, empty titles, a NUL', () => {
    const texts = [
      { doc_id: 'καλημέρα', title: 'Αρχή της αναλογικότητας' },
      { doc_id: '文書-1', title: '個人情報の保護に関する法律' },
      { doc_id: 'e', title: '' },
      { doc_id: 'emoji-🦀', title: 'crab 🦀 and family 👨‍👩‍👧' },
      { doc_id: 'nul', title: 'before\u0000after' },
    ];
    const labels = new DocumentLabels();
    labels.add(0, packLabels(texts));
    texts.forEach((text, position) => {
      assert.deepEqual(labels.at(position), { docId: text.doc_id, title: text.title });
    });
  });

  it('has no label beyond the documents added, nor from a document that came without one', () => {
    const labels = new DocumentLabels();
    assert.equal(labels.at(0), undefined);
    labels.add(0, packLabels(rows(0, 2)));
    assert.equal(labels.at(2), undefined);
    assert.equal(labels.at(-1), undefined);
    labels.add(2, undefined);
    // Documents 2 and 3 came without labels: the labels of 4 and 5 are not kept at positions 2 and 3.
    labels.add(4, packLabels(rows(4, 2)));
    assert.equal(labels.size, 2);
    assert.equal(labels.at(4), undefined);
  });
});
