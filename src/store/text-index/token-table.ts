/**
 * Term ids by token for tokens of ASCII letters and digits, found by the scanner's hash and a
 * character comparison with the scanned text, so that the common case makes no string at all.
 * Open addressing, linear probing; starts over when full past `limit` entries (a safeguard
 * against endless vocabularies, such as ids in text).
 */
export class TokenTable {
  private keys: Array<string | undefined>;
  private hashes: Int32Array;
  private ids: Int32Array;
  private size = 0;

  constructor(private readonly limit: number, private capacity = 1 << 16) {
    this.keys = new Array(capacity);
    this.hashes = new Int32Array(capacity);
    this.ids = new Int32Array(capacity);
  }

  /** The id stored for `source.slice(start, end)`, or -1. */
  find(source: string, start: number, end: number, hash: number): number {
    const mask = this.capacity - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const key = this.keys[slot];
      if (key === undefined) return -1;
      if (this.hashes[slot] === hash && key.length === length && sameCharacters(key, source, start)) return this.ids[slot]!;
    }
  }

  insert(token: string, hash: number, id: number): void {
    if (this.size * 2 >= this.capacity) {
      if (this.size >= this.limit) this.reset(this.capacity);
      else this.rehash(this.capacity * 2);
    }
    const mask = this.capacity - 1;
    let slot = hash & mask;
    while (this.keys[slot] !== undefined) slot = (slot + 1) & mask;
    this.keys[slot] = token;
    this.hashes[slot] = hash;
    this.ids[slot] = id;
    this.size++;
  }

  private reset(capacity: number): void {
    this.capacity = capacity;
    this.keys = new Array(capacity);
    this.hashes = new Int32Array(capacity);
    this.ids = new Int32Array(capacity);
    this.size = 0;
  }

  private rehash(capacity: number): void {
    const { keys, hashes, ids } = this;
    this.reset(capacity);
    for (let slot = 0; slot < keys.length; slot++) {
      const key = keys[slot];
      if (key !== undefined) this.insert(key, hashes[slot]!, ids[slot]!);
    }
  }
}

/** Whether the (lower-case) key equals the source's characters from `start`, compared lower-cased. */
function sameCharacters(key: string, source: string, start: number): boolean {
  for (let index = 0; index < key.length; index++) {
    const code = source.charCodeAt(start + index);
    if (key.charCodeAt(index) !== (code >= 65 && code <= 90 ? code + 32 : code)) return false;
  }
  return true;
}
