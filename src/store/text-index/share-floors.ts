// Each search goes to every search thread, and the threads rarely take it at the same moment: the
// one ahead has usually answered before the one behind starts. Its k-th best score is then a floor
// for the others (a hit below it cannot be in the merged top k), and a higher bar from the first
// block on means fewer blocks and candidates scored by the thread that is behind.

/** Searches remembered per thread; far more than are ever waiting in a thread's queue. */
const SLOTS = 4096;
const SEARCH_BITS = 0x7fffffff;

const scratchScore = new Float32Array(1);
const scratchBits = new Uint32Array(scratchScore.buffer);

/** Memory for the floors of `threads` threads, shared with each of them. */
export function newFloorSlots(threads: number): BigInt64Array {
  return new BigInt64Array(new SharedArrayBuffer(8 * SLOTS * threads));
}

/**
 * One thread's view of the shared floors. A slot holds a search's number and a score as one 64-bit
 * value, so a reader sees both from the same write; the score is a float32 rounded down, since a
 * floor may be lower than the k-th best score but never higher.
 */
export class ShareFloors {
  private readonly threads: number;

  constructor(
    private readonly slots: BigInt64Array,
    private readonly thread: number,
  ) {
    this.threads = slots.length / SLOTS;
  }

  /** Records this thread's k-th best score for `search`. */
  publish(search: number, kth: number): void {
    if (!(kth > 0)) return;
    scratchScore[0] = kth;
    if (scratchScore[0] > kth) scratchBits[0]! -= 1;
    const value = (BigInt(search & SEARCH_BITS) << 32n) | BigInt(scratchBits[0]!);
    Atomics.store(this.slots, this.thread * SLOTS + (search % SLOTS), value);
  }

  /** The highest k-th best score another thread has recorded for `search`; 0 when none has. */
  floorFor(search: number): number {
    let floor = 0;
    for (let other = 0; other < this.threads; other++) {
      if (other === this.thread) continue;
      const value = Atomics.load(this.slots, other * SLOTS + (search % SLOTS));
      if (Number(value >> 32n) !== (search & SEARCH_BITS)) continue;
      scratchBits[0] = Number(value & 0xffffffffn);
      if (scratchScore[0]! > floor) floor = scratchScore[0]!;
    }
    return floor;
  }
}
