/** Per slot: the token's hash, its id, where its characters start in the pool, its length (0: empty). */
const SLOT_INTS = 4;

/**
 * Term ids by token for tokens of ASCII characters, found by the scanner's hash and a character
 * comparison with the scanned text, so that the common case makes no string at all. Open
 * addressing, linear probing. A slot's hash, id and length share one cache line and the characters
 * sit in one byte pool, because ingestion looks a token up for every word it reads and was bound
 * by the memory reads of a lookup (a string key cost two more). Starts over when full past `limit`
 * entries (a safeguard against endless vocabularies, such as ids in text).
 */
export class TokenTable {
  private slots: Int32Array;
  private pool = new Uint8Array(1 << 16);
  private poolLength = 0;
  private size = 0;

  constructor(private readonly limit: number, private capacity = 1 << 16) {
    this.slots = new Int32Array(capacity * SLOT_INTS);
  }

  /** The id stored for `source.slice(start, end)` compared lower-cased, or -1. */
  find(source: string, start: number, end: number, hash: number): number {
    const slots = this.slots;
    const pool = this.pool;
    const mask = this.capacity - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const base = slot * SLOT_INTS;
      const slotLength = slots[base + 3]!;
      if (slotLength === 0) return -1;
      if (slots[base] !== hash || slotLength !== length) continue;
      let offset = slots[base + 2]!;
      let index = start;
      while (index < end) {
        const code = source.charCodeAt(index);
        if (pool[offset] !== (code >= 65 && code <= 90 ? code + 32 : code)) break;
        index++;
        offset++;
      }
      if (index === end) return slots[base + 1]!;
    }
  }

  /** Stores `id` for a lower-case ASCII token. */
  insert(token: string, hash: number, id: number): void {
    if (this.size * 2 >= this.capacity) {
      if (this.size >= this.limit) this.reset();
      else this.rehash(this.capacity * 2);
    }
    if (this.poolLength + token.length > this.pool.length) {
      const grown = new Uint8Array(Math.max(this.pool.length * 2, this.poolLength + token.length));
      grown.set(this.pool);
      this.pool = grown;
    }
    const offset = this.poolLength;
    for (let index = 0; index < token.length; index++) this.pool[offset + index] = token.charCodeAt(index);
    this.poolLength += token.length;
    this.place(hash, id, offset, token.length);
    this.size++;
  }

  private place(hash: number, id: number, offset: number, length: number): void {
    const mask = this.capacity - 1;
    let slot = hash & mask;
    while (this.slots[slot * SLOT_INTS + 3] !== 0) slot = (slot + 1) & mask;
    const base = slot * SLOT_INTS;
    this.slots[base] = hash;
    this.slots[base + 1] = id;
    this.slots[base + 2] = offset;
    this.slots[base + 3] = length;
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
    for (let base = 0; base < old.length; base += SLOT_INTS) {
      if (old[base + 3] !== 0) this.place(old[base]!, old[base + 1]!, old[base + 2]!, old[base + 3]!);
    }
  }
}
