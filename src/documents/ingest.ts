import { open, readFile } from 'node:fs/promises';
import { CONTROL, CONTROL_IN_TEXT } from '../platform/control-characters.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../platform/json-depth.js';
import { SEARCH_LANGUAGES } from '../rules.js';
import type { DocumentRecord, MetadataValue } from './document-store.js';

/** A bad record, located by 1-based line (JSONL) or 0-based index (JSON array). */
export class IngestError extends Error {
  constructor(
    readonly location: { line: number } | { index: number },
    reason: string,
  ) {
    super(`${'line' in location ? `line ${location.line}` : `index ${location.index}`}: ${reason}`);
  }
}

const ID_FIELDS = ['doc_id', '_id', 'id'] as const;
const TEXT_FIELDS = ['text', 'body'] as const;
const RESERVED = new Set<string>([...ID_FIELDS, ...TEXT_FIELDS, 'title']);

function optionalString(record: Record<string, unknown>, fields: readonly string[]): string | Error {
  const field = fields.find((name) => record[name] !== undefined && record[name] !== null);
  if (field === undefined) return '';
  const value = record[field];
  if (typeof value !== 'string') return new Error(`${field} must be a string`);
  if (CONTROL_IN_TEXT.test(value))
    return new Error(`${field} must not hold control characters other than tabs and line breaks (it holds NUL, ESC or the like)`);
  return value;
}

/** The path of the first metadata key or string value holding control characters (tabs and line breaks allowed in values), or undefined. */
function controlledMetadata(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return CONTROL_IN_TEXT.test(value) ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    if (!Array.isArray(value) && CONTROL.test(key)) return `a key in ${path}`;
    const found = controlledMetadata(child, at);
    if (found) return found;
  }
  return undefined;
}

/** One parsed JSON value as a document, or the reason it is not one. */
export function toDocument(value: unknown): DocumentRecord | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'a document must be a JSON object';
  const record = value as Record<string, unknown>;
  const idField = ID_FIELDS.find((name) => record[name] !== undefined && record[name] !== null);
  const id = idField === undefined ? undefined : record[idField];
  let docId: string;
  if (typeof id === 'string' && id.trim() !== '') docId = id;
  else if (typeof id === 'number' && Number.isFinite(id)) docId = String(id);
  else return 'doc_id (or _id, id) is required: a non-empty string or a number';
  if (CONTROL.test(docId)) return `${idField} must not hold control characters (such as NUL, ESC or a line break)`;
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) return `a document may nest objects and arrays at most ${MAX_JSON_DEPTH} levels deep`;
  const title = optionalString(record, ['title']);
  if (title instanceof Error) return title.message;
  const text = optionalString(record, TEXT_FIELDS);
  if (text instanceof Error) return text.message;
  const language = record.language;
  if (language !== undefined && language !== null && !(typeof language === 'string' && SEARCH_LANGUAGES.includes(language)))
    return `language must be one of ${SEARCH_LANGUAGES.join(', ')} (ISO 639-1 in lower case, or none), got ${JSON.stringify(language)}`;
  const metadata: Record<string, MetadataValue> = {};
  for (const [field, fieldValue] of Object.entries(record)) {
    if (RESERVED.has(field)) continue;
    const controlled = CONTROL.test(field) ? 'a metadata field name' : controlledMetadata(fieldValue, field);
    if (controlled) return `${controlled} must not hold control characters other than tabs and line breaks`;
    metadata[field] = fieldValue as MetadataValue;
  }
  return { docId, title, text, metadata };
}

async function startsWithBracket(path: string): Promise<boolean> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart();
    return head.startsWith('[');
  } finally {
    await handle.close();
  }
}

/** The documents of a parsed JSON array, each validated; a bad one is reported by its 0-based index. */
export function* documentsOfArray(values: unknown): Generator<DocumentRecord> {
  if (!Array.isArray(values)) throw new IngestError({ index: 0 }, 'a JSON body or file must hold an array of documents');
  for (const [index, value] of values.entries()) {
    const document = toDocument(value);
    if (typeof document === 'string') throw new IngestError({ index }, document);
    yield document;
  }
}

/** One JSONL line (1-based `line`) as a document; undefined for a blank line. */
function documentOfLine(raw: string, line: number): DocumentRecord | undefined {
  const text = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new IngestError({ line }, `not valid JSON (${(error as Error).message})`);
  }
  const document = toDocument(value);
  if (typeof document === 'string') throw new IngestError({ line }, document);
  return document;
}

/** The documents of JSONL text, each validated; a bad one is reported by its 1-based line. */
export function* documentsOfJsonLines(text: string): Generator<DocumentRecord> {
  for (const [index, raw] of text.split('\n').entries()) {
    const document = documentOfLine(raw, index + 1);
    if (document) yield document;
  }
}

async function* fromJsonArray(path: string): AsyncGenerator<DocumentRecord> {
  let values: unknown;
  try {
    values = JSON.parse((await readFile(path, 'utf8')).replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new IngestError({ index: 0 }, `the file is not valid JSON (${(error as Error).message})`);
  }
  yield* documentsOfArray(values);
}

async function* fromJsonLines(path: string): AsyncGenerator<DocumentRecord> {
  let line = 0;
  for await (const lines of lineBatches(path)) {
    for (const raw of lines) {
      line++;
      const document = documentOfLine(raw, line);
      if (document) yield document;
    }
  }
}

const READ_CHUNK_BYTES = 1 << 20;

/**
 * A UTF-8 file's lines, as many at a time as one read holds, without their LF (the CR of a CRLF
 * stays: JSON takes it as whitespace). Split as bytes (an LF byte is never part of a multi-byte
 * character) and decoded line by line: readline's stream decoding, regular expression split and
 * promise per line were a tenth of the thread that parses and writes an ingest.
 */
async function* lineBatches(path: string): AsyncGenerator<string[]> {
  const handle = await open(path, 'r');
  try {
    let carried: Buffer[] = [];
    for (;;) {
      const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
      const { bytesRead } = await handle.read(chunk, 0, READ_CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      const bytes = chunk.subarray(0, bytesRead);
      const lines: string[] = [];
      let start = 0;
      for (let end = bytes.indexOf(0x0a); end !== -1; end = bytes.indexOf(0x0a, start)) {
        if (carried.length > 0) {
          carried.push(bytes.subarray(start, end));
          lines.push(Buffer.concat(carried).toString('utf8'));
          carried = [];
        } else lines.push(bytes.toString('utf8', start, end));
        start = end + 1;
      }
      if (start < bytes.length) carried.push(bytes.subarray(start));
      yield lines;
    }
    if (carried.length > 0) yield [Buffer.concat(carried).toString('utf8')];
  } finally {
    await handle.close();
  }
}

/** Documents from a JSONL file or a JSON array file, validated one by one as they are read. */
export async function readDocuments(path: string): Promise<AsyncGenerator<DocumentRecord>> {
  return (await startsWithBracket(path)) ? fromJsonArray(path) : fromJsonLines(path);
}
