import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';

/**
 * A segment file: an index's arrays as they are in memory, so that a start reads them back whole
 * instead of building them from the stored term vectors. Layout: MAGIC, the header's length (u32,
 * little-endian), the header as JSON (its scalars, and each array's type, element count and byte
 * offset), then the arrays, each at an offset that is a multiple of 8 so that it is read back as a
 * view of the file's buffer, without a copy. CRC-32 covers every byte: 5 GB/s here, where SHA-256
 * was 1.2 GB/s, and what is checked is a torn or damaged write, not an adversary.
 */
const MAGIC = Buffer.from('MSSEGMT1');

const ARRAY_TYPES = {
  u8: Uint8Array,
  u16: Uint16Array,
  u32: Uint32Array,
  i32: Int32Array,
  f64: Float64Array,
} as const;

export type ArrayType = keyof typeof ARRAY_TYPES;
export type SegmentArrayOf<T extends ArrayType> = InstanceType<(typeof ARRAY_TYPES)[T]>;
/** Any of the arrays, over whatever buffer: pieces to write may be views of shared memory. */
type AnyArray =
  | Uint8Array<ArrayBufferLike>
  | Uint16Array<ArrayBufferLike>
  | Uint32Array<ArrayBufferLike>
  | Int32Array<ArrayBufferLike>
  | Float64Array<ArrayBufferLike>;

/** An array to write: its type, its length in elements, and its contents as pieces in order (zeros after the last, up to `length`). */
export interface ArraySource {
  type: ArrayType;
  length: number;
  pieces: () => Iterable<AnyArray>;
}

/** What a written segment is: checked whole before it is read. */
export interface SegmentRecord {
  file: string;
  bytes: number;
  crc: number;
}

interface Header {
  scalars: Record<string, number>;
  arrays: Record<string, { type: ArrayType; length: number; offset: number }>;
}

/** Writes are gathered into a buffer of this size: an index has up to millions of small lists. */
const STAGING_BYTES = 4 << 20;
/** A write pauses (yields) after about this many bytes: a few milliseconds of the thread's time. */
const SLICE_BYTES = 16 << 20;

function align(offset: number): number {
  return Math.ceil(offset / 8) * 8;
}

/**
 * Writes a segment to `path` (created or replaced), yielding after every SLICE_BYTES, then syncs
 * it to disk; returns its size and checksum. The arrays' pieces must not change until it is done.
 */
export function* writeSegment(
  path: string,
  scalars: Record<string, number>,
  arrays: Record<string, ArraySource>,
): Generator<void, { bytes: number; crc: number }, void> {
  const header: Header = { scalars, arrays: {} };
  const headerLength = () => Buffer.byteLength(JSON.stringify(header));
  // Offsets depend on the header's length, which depends on the offsets' digits: settle it twice.
  for (let pass = 0; pass < 2; pass++) {
    let offset = align(MAGIC.length + 4 + headerLength() + 64);
    for (const [name, source] of Object.entries(arrays)) {
      header.arrays[name] = { type: source.type, length: source.length, offset };
      offset = align(offset + source.length * ARRAY_TYPES[source.type].BYTES_PER_ELEMENT);
    }
  }
  const headerJson = Buffer.from(JSON.stringify(header));
  const file = openSync(path, 'w');
  const staging = Buffer.allocUnsafe(STAGING_BYTES);
  let staged = 0;
  let written = 0;
  let crc = 0;
  let sinceYield = 0;
  const flush = () => {
    if (staged === 0) return;
    const chunk = staging.subarray(0, staged);
    crc = crc32(chunk, crc);
    for (let done = 0; done < staged; ) done += writeSync(file, chunk, done, staged - done, written + done);
    written += staged;
    sinceYield += staged;
    staged = 0;
  };
  const put = (bytes: Uint8Array) => {
    for (let from = 0; from < bytes.length; ) {
      if (staged === STAGING_BYTES) flush();
      const take = Math.min(bytes.length - from, STAGING_BYTES - staged);
      staging.set(bytes.subarray(from, from + take), staged);
      staged += take;
      from += take;
    }
  };
  const zeros = new Uint8Array(STAGING_BYTES);
  const pad = (count: number) => {
    for (let left = count; left > 0; left -= STAGING_BYTES) put(zeros.subarray(0, Math.min(left, STAGING_BYTES)));
  };
  try {
    const lengthBytes = Buffer.alloc(4);
    lengthBytes.writeUInt32LE(headerJson.length);
    put(MAGIC);
    put(lengthBytes);
    put(headerJson);
    let position = MAGIC.length + 4 + headerJson.length;
    for (const [name, source] of Object.entries(arrays)) {
      const { offset } = header.arrays[name];
      pad(offset - position);
      position = offset;
      const size = ARRAY_TYPES[source.type].BYTES_PER_ELEMENT;
      let elements = 0;
      for (const piece of source.pieces()) {
        const take = Math.min(piece.length, source.length - elements);
        put(new Uint8Array(piece.buffer, piece.byteOffset, take * size));
        elements += take;
        if (sinceYield >= SLICE_BYTES) {
          sinceYield = 0;
          yield;
        }
      }
      pad((source.length - elements) * size);
      position += source.length * size;
    }
    pad(align(position) - position);
    flush();
    fsyncSync(file);
  } finally {
    closeSync(file);
  }
  return { bytes: written, crc };
}

/** A segment that cannot be served: missing, torn, damaged or of another layout. */
export class SegmentError extends Error {}

/** A segment read back: its scalars, and its arrays as views of one buffer. */
export interface ReadSegment {
  scalars: Record<string, number>;
  array<T extends ArrayType>(name: string, type: T): SegmentArrayOf<T>;
  has(name: string): boolean;
}

/** Reads a segment whole and checks it against its record (size and checksum) before anything in it is used. */
export function readSegment(path: string, expected: Pick<SegmentRecord, 'bytes' | 'crc'>): ReadSegment {
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (error) {
    throw new SegmentError(`segment ${path} cannot be read: ${(error as Error).message}`);
  }
  if (data.length !== expected.bytes) throw new SegmentError(`segment ${path} holds ${data.length} bytes, not ${expected.bytes}`);
  if (crc32(data) !== expected.crc) throw new SegmentError(`segment ${path} fails its checksum`);
  if (!data.subarray(0, MAGIC.length).equals(MAGIC)) throw new SegmentError(`segment ${path} is not a segment of this format`);
  const headerLength = data.readUInt32LE(MAGIC.length);
  const header = JSON.parse(data.toString('utf8', MAGIC.length + 4, MAGIC.length + 4 + headerLength)) as Header;
  // A view needs its offset aligned in the underlying buffer: a copy in a buffer of its own if not.
  const base = data.byteOffset % 8 === 0 ? data : new Uint8Array(data);
  return {
    scalars: header.scalars,
    has: (name) => name in header.arrays,
    array<T extends ArrayType>(name: string, type: T): SegmentArrayOf<T> {
      const entry = header.arrays[name];
      if (!entry || entry.type !== type) throw new SegmentError(`segment ${path} has no ${type} array ${name}`);
      const Type = ARRAY_TYPES[type];
      if (entry.offset + entry.length * Type.BYTES_PER_ELEMENT > base.length)
        throw new SegmentError(`segment ${path}: array ${name} runs past its end`);
      return new Type(base.buffer as ArrayBuffer, base.byteOffset + entry.offset, entry.length) as SegmentArrayOf<T>;
    },
  };
}
