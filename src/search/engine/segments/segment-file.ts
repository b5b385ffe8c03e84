import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
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

/** A segment read back: its scalars, and its arrays as views of one buffer, or left in the file (see readSegment). */
export interface ReadSegment {
  scalars: Record<string, number>;
  array<T extends ArrayType>(name: string, type: T): SegmentArrayOf<T>;
  /** A u8 array the read left in the file. */
  stored(name: string): StoredBytes;
  has(name: string): boolean;
  /** Whether the read left the array in the file (see readSegment). */
  isStored(name: string): boolean;
}

/** Closes a segment's descriptor once nothing stored in it is referenced any more. */
const openFiles = new FinalizationRegistry<number>((fd) => closeSync(fd));

/** A segment file held open, for the arrays a read left in it. Renaming or deleting the file does not disturb it. */
class OpenSegmentFile {
  constructor(
    readonly path: string,
    readonly fd: number,
  ) {
    openFiles.register(this, fd);
  }
}

/**
 * Bytes of a u8 array left in its segment file, read when they are wanted (a few phrases' words),
 * so that a start holds in memory only what every search reads.
 */
export class StoredBytes {
  constructor(
    private readonly file: OpenSegmentFile,
    private readonly offset: number,
    readonly length: number,
  ) {}

  /** Bytes `start` to `end` of them, read now into a buffer of their own. */
  read(start = 0, end = this.length): Uint8Array {
    const bytes = new Uint8Array(end - start);
    for (let done = 0; done < bytes.length; ) {
      const read = readSync(this.file.fd, bytes, done, bytes.length - done, this.offset + start + done);
      if (read === 0) throw new SegmentError(`segment ${this.file.path} ends before its stored bytes`);
      done += read;
    }
    return bytes;
  }

  slice(start: number, end: number): StoredBytes {
    return new StoredBytes(this.file, this.offset + start, end - start);
  }

  /** Whether `next` begins where these end, in the same file: the two are read as one. */
  isFollowedBy(next: StoredBytes): boolean {
    return next.file === this.file && next.offset === this.offset + this.length;
  }

  /** These and the ones that follow them (see isFollowedBy) as one range. */
  joined(next: StoredBytes): StoredBytes {
    return new StoredBytes(this.file, this.offset, this.length + next.length);
  }
}

/** The file is read and checked this many bytes at a time where an array stays in it. */
const READ_CHUNK_BYTES = 8 << 20;

/**
 * Reads a segment and checks it against its record (size and checksum) before anything in it is
 * used. The arrays named in `onDisk` stay in the file: read through for the checksum, but not
 * kept in memory (see StoredBytes); the others are views of one buffer.
 */
export function readSegment(path: string, expected: Pick<SegmentRecord, 'bytes' | 'crc'>, onDisk: readonly string[] = []): ReadSegment {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new SegmentError(`segment ${path} cannot be read: ${(error as Error).message}`);
  }
  const file = new OpenSegmentFile(path, fd);
  const size = fstatSync(fd).size;
  if (size !== expected.bytes) throw new SegmentError(`segment ${path} holds ${size} bytes, not ${expected.bytes}`);
  const header = readHeader(file, size);
  // The byte ranges left in the file, in file order; every array starts at a multiple of 8, so
  // the kept bytes shifted down past them stay aligned.
  const skipped = Object.entries(header.arrays)
    .filter(([name, entry]) => onDisk.includes(name) && entry.type === 'u8')
    .map(([, entry]) => ({ start: entry.offset, end: Math.min(size, align(entry.offset + entry.length)) }))
    .sort((a, b) => a.start - b.start);
  if (skipped.some((range, index) => range.start > range.end || range.start < (skipped[index - 1]?.end ?? 0)))
    throw new SegmentError(`segment ${path} has a damaged header`);
  // allocUnsafeSlow: a buffer of its own, at offset 0, and not zeroed first (every byte is read into it).
  const kept = Buffer.allocUnsafeSlow(size - skipped.reduce((total, range) => total + range.end - range.start, 0));
  let crc = 0;
  let keptLength = 0;
  let position = 0;
  const scratch = skipped.length > 0 ? new Uint8Array(Math.min(READ_CHUNK_BYTES, size)) : kept;
  for (const range of [...skipped, { start: size, end: size }]) {
    const into = kept.subarray(keptLength, keptLength + range.start - position);
    readFully(file, into, position);
    crc = crc32(into, crc);
    keptLength += into.length;
    for (let from = range.start; from < range.end; from += scratch.length) {
      const chunk = scratch.subarray(0, Math.min(scratch.length, range.end - from));
      readFully(file, chunk, from);
      crc = crc32(chunk, crc);
    }
    position = range.end;
  }
  if (crc !== expected.crc) throw new SegmentError(`segment ${path} fails its checksum`);
  const shiftOf = (offset: number) => skipped.reduce((shift, range) => (range.end <= offset ? shift + range.end - range.start : shift), 0);
  const entryOf = (name: string, type: ArrayType) => {
    const entry = header.arrays[name];
    if (!entry || entry.type !== type) throw new SegmentError(`segment ${path} has no ${type} array ${name}`);
    if (entry.offset + entry.length * ARRAY_TYPES[type].BYTES_PER_ELEMENT > size)
      throw new SegmentError(`segment ${path}: array ${name} runs past its end`);
    return entry;
  };
  return {
    scalars: header.scalars,
    has: (name) => name in header.arrays,
    isStored: (name) => name in header.arrays && onDisk.includes(name),
    array<T extends ArrayType>(name: string, type: T): SegmentArrayOf<T> {
      const entry = entryOf(name, type);
      if (onDisk.includes(name)) throw new SegmentError(`segment ${path}: array ${name} was left on disk`);
      return new ARRAY_TYPES[type](kept.buffer, entry.offset - shiftOf(entry.offset), entry.length) as SegmentArrayOf<T>;
    },
    stored(name: string): StoredBytes {
      const entry = entryOf(name, 'u8');
      if (!onDisk.includes(name)) throw new SegmentError(`segment ${path}: array ${name} was read into memory`);
      return new StoredBytes(file, entry.offset, entry.length);
    },
  };
}

function readFully(file: OpenSegmentFile, into: Uint8Array, position: number): void {
  for (let done = 0; done < into.length; ) {
    const read = readSync(file.fd, into, done, into.length - done, position + done);
    if (read === 0) throw new SegmentError(`segment ${file.path} ends early`);
    done += read;
  }
}

/** The header: MAGIC, its length, then its JSON. */
function readHeader(file: OpenSegmentFile, size: number): Header {
  const start = Buffer.alloc(Math.min(size, MAGIC.length + 4));
  readFully(file, start, 0);
  if (size < MAGIC.length + 4 || !start.subarray(0, MAGIC.length).equals(MAGIC))
    throw new SegmentError(`segment ${file.path} is not a segment of this format`);
  const headerLength = start.readUInt32LE(MAGIC.length);
  if (MAGIC.length + 4 + headerLength > size) throw new SegmentError(`segment ${file.path} is not a segment of this format`);
  const json = Buffer.alloc(headerLength);
  readFully(file, json, MAGIC.length + 4);
  try {
    return JSON.parse(json.toString('utf8')) as Header;
  } catch {
    throw new SegmentError(`segment ${file.path} is not a segment of this format`);
  }
}
