import type { IndexedDocument } from './search-index.js';

/**
 * Documents as IndexedDocument, in four arrays that move between threads without a copy: each
 * document's row id, its title's and text's lengths side by side, and the end of its term vector
 * in `vectors`, where they lie end to end.
 */
export interface PackedDocuments {
  rowids: Float64Array;
  lengths: Uint32Array;
  ends: Uint32Array;
  vectors: Uint8Array;
}

export function packDocuments(documents: IndexedDocument[]): PackedDocuments {
  let bytes = 0;
  for (const document of documents) bytes += document.terms.length;
  const packed: PackedDocuments = {
    rowids: new Float64Array(documents.length),
    lengths: new Uint32Array(2 * documents.length),
    ends: new Uint32Array(documents.length),
    vectors: new Uint8Array(bytes),
  };
  let end = 0;
  documents.forEach((document, position) => {
    packed.rowids[position] = document.rowid;
    packed.lengths[2 * position] = document.titleLength;
    packed.lengths[2 * position + 1] = document.textLength;
    packed.vectors.set(document.terms, end);
    end += document.terms.length;
    packed.ends[position] = end;
  });
  return packed;
}

/** The documents again, their term vectors views of `vectors`. */
export function unpackDocuments({ rowids, lengths, ends, vectors }: PackedDocuments): IndexedDocument[] {
  const documents: IndexedDocument[] = [];
  let start = 0;
  for (let position = 0; position < rowids.length; position++) {
    const end = ends[position];
    documents.push({
      rowid: rowids[position],
      titleLength: lengths[2 * position],
      textLength: lengths[2 * position + 1],
      terms: vectors.subarray(start, end),
    });
    start = end;
  }
  return documents;
}

/** The buffers to transfer with a message carrying `packed`. */
export function packedBuffers(packed: PackedDocuments): ArrayBuffer[] {
  return [packed.rowids.buffer, packed.lengths.buffer, packed.ends.buffer, packed.vectors.buffer] as ArrayBuffer[];
}
