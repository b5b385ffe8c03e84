import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { DocumentRecord } from '../../src/documents/document-store.js';
import { IngestError, readDocuments } from '../../src/documents/ingest.js';
import { tempDir } from '../support/helper.js';

describe('readDocuments (JSONL)', () => {
  const dir = tempDir();
  after(() => dir.remove());

  function file(name: string, content: string | Buffer): string {
    const path = join(dir.path, name);
    writeFileSync(path, content);
    return path;
  }

  async function read(path: string): Promise<DocumentRecord[]> {
    const documents: DocumentRecord[] = [];
    for await (const document of await readDocuments(path)) documents.push(document);
    return documents;
  }

  it('reads lines across reads of the file: characters split between reads, lines longer than a read, CRLF, a BOM, no final newline', async () => {
    const READ = 1 << 20;
    const first = JSON.stringify({ doc_id: 'bom', text: 'first' });
    // Pads the second record so that its first 'é' (two bytes) straddles the first read's end.
    const head = `\uFEFF${first}\r\n`;
    const prefix = JSON.stringify({ doc_id: 'straddles', text: '' }).slice(0, -2);
    const filler = 'x'.repeat(READ - Buffer.byteLength(head) - Buffer.byteLength(prefix) - 1);
    const straddling = `${prefix}${filler}ééé€😀"}`;
    const long = JSON.stringify({ doc_id: 'long', title: 'Ω', text: 'ü'.repeat(READ * 1.5) });
    const last = JSON.stringify({ doc_id: 'last', text: 'no newline after me' });
    const path = file('mixed.jsonl', `${head}${straddling}\n\r\n   \n${long}\r\n${last}`);

    const documents = await read(path);
    assert.deepEqual(
      documents.map((document) => document.docId),
      ['bom', 'straddles', 'long', 'last'],
    );
    assert.equal(documents[1].text, `${filler}ééé€😀`);
    assert.equal(documents[2].text.length, READ * 1.5);
    assert.ok(documents[2].text.split('').every((character) => character === 'ü'));
    assert.equal(documents[3].text, 'no newline after me');
  });

  it('names the 1-based line of a bad record, blank lines and lines past a read included', async () => {
    const long = JSON.stringify({ doc_id: 'long', text: 'a'.repeat(3 << 20) });
    const path = file('bad.jsonl', [JSON.stringify({ doc_id: 'one' }), '', long, '{"doc_id": "four", '].join('\n'));
    await assert.rejects(read(path), (error: unknown) => error instanceof IngestError && /^line 4: not valid JSON/.test(error.message));
  });
});
