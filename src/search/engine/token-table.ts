import { resized } from './typed-arrays.js';

/**
 * Per slot, as 32-bit ints: the token's hash, its id, its length (0: empty), where its characters
 * start in the pool; then the characters themselves when the token is short enough to fit.
 */
const SLOT_INTS = 8;
const SLOT_BYTES = SLOT_INTS * 4;
const INLINE_OFFSET_BYTES = 16;
const INLINE_CHARACTERS = SLOT_BYTES - INLINE_OFFSET_BYTES;

/**
 * Term ids by token for tokens of characters below U+0100 (ASCII and Latin-1), found by the scanner's hash and a character
 * comparison with the scanned text, so that the common case makes no string at all. Open
 * addressing, linear probing. Ingestion looks a token up for every word it reads and is bound by
 * the memory reads of a lookup, so a slot (32 bytes, half a cache line) holds the hash, the id and,
 * for tokens of up to 16 characters, the characters too: one cache miss per lookup, not two. Longer
 * tokens' characters sit in one byte pool. Starts over when full past `limit` entries (a safeguard
 * against endless vocabularies, such as ids in text).
 */
export class TokenTable {
  private slots: Int32Array;
  private slotBytes: Uint8Array;
  private pool = new Uint8Array(1 << 12);
  private poolLength = 0;
  private size = 0;

  constructor(
    private readonly limit: number,
    private capacity = 1 << 16,
  ) {
    this.slots = new Int32Array(capacity * SLOT_INTS);
    this.slotBytes = new Uint8Array(this.slots.buffer);
  }

  /** The id stored for `source.slice(start, end)` compared lower-cased, or -1. */
  find(source: string, start: number, end: number, hash: number): number {
    const slots = this.slots;
    const mask = this.capacity - 1;
    const length = end - start;
    const inline = length <= INLINE_CHARACTERS;
    const characters = inline ? this.slotBytes : this.pool;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const base = slot * SLOT_INTS;
      const slotLength = slots[base + 2];
      if (slotLength === 0) return -1;
      if (slots[base] !== hash || slotLength !== length) continue;
      let offset = inline ? slot * SLOT_BYTES + INLINE_OFFSET_BYTES : slots[base + 3];
      let index = start;
      while (index < end) {
        const code = source.charCodeAt(index);
        if (characters[offset] !== (code >= 65 && code <= 90 ? code + 32 : code)) break;
        index++;
        offset++;
      }
      if (index === end) return slots[base + 1];
    }
  }

  /** Stores `id` for a lower-case token of characters below U+0100 (one byte each). */
  insert(token: string, hash: number, id: number): void {
    if (this.size * 2 >= this.capacity) {
      if (this.size >= this.limit) this.reset();
      else this.rehash(this.capacity * 2);
    }
    let offset = 0;
    if (token.length > INLINE_CHARACTERS) {
      if (this.poolLength + token.length > this.pool.length)
        this.pool = resized(this.pool, Math.max(this.pool.length * 2, this.poolLength + token.length));
      offset = this.poolLength;
      for (let index = 0; index < token.length; index++) this.pool[offset + index] = token.charCodeAt(index);
      this.poolLength += token.length;
    }
    const slot = this.freeSlot(hash);
    const base = slot * SLOT_INTS;
    this.slots[base] = hash;
    this.slots[base + 1] = id;
    this.slots[base + 2] = token.length;
    this.slots[base + 3] = offset;
    if (token.length <= INLINE_CHARACTERS) {
      const inline = slot * SLOT_BYTES + INLINE_OFFSET_BYTES;
      for (let index = 0; index < token.length; index++) this.slotBytes[inline + index] = token.charCodeAt(index);
    }
    this.size++;
  }

  private freeSlot(hash: number): number {
    const mask = this.capacity - 1;
    let slot = hash & mask;
    while (this.slots[slot * SLOT_INTS + 2] !== 0) slot = (slot + 1) & mask;
    return slot;
  }

  private reset(): void {
    this.slots.fill(0);
    this.poolLength = 0;
    this.size = 0;
  }

  private rehash(capacity: number): void {
    const old = this.slots;
    this.capacity = capacity;
    this.slots = new Int32Array(capacity * SLOT_INTS);
    this.slotBytes = new Uint8Array(this.slots.buffer);
    for (let base = 0; base < old.length; base += SLOT_INTS) {
      if (old[base + 2] === 0) continue;
      const slot = this.freeSlot(old[base]);
      this.slots.set(old.subarray(base, base + SLOT_INTS), slot * SLOT_INTS);
    }
  }
}
