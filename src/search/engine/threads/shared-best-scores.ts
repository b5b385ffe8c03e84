// Each search goes to every search thread, and the threads rarely take it at the same moment: the
// one ahead has usually answered before the one behind starts. The best scores it found are then
// a head start for the others: merged with their own hits, they set the bar at the k-th best of
// both shares (a hit below it cannot be in the merged top k), so the thread behind scores fewer
// blocks and candidates.

/** Searches remembered per thread; far more than are ever waiting in a thread's queue. */
const SLOTS = 2048;
/** Best scores recorded per search: the default top_k's and then some. */
export const SHARED_SCORES = 16;
/** A slot: the search's number, how many scores, the scores (float32 bits). */
const SLOT_SIZE = 2 + SHARED_SCORES;

const scratchScore = new Float32Array(1);
const scratchBits = new Int32Array(scratchScore.buffer);

/** Memory for the best scores of `threads` threads, shared with each of them. */
export function newShareSlots(threads: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * SLOT_SIZE * SLOTS * threads));
}

/** A score as float32 bits, rounded down: a head start may be lower than the scores found, never higher. */
function bitsBelow(score: number): number {
  scratchScore[0] = score;
  if (scratchScore[0] > score) scratchBits[0] -= 1;
  return scratchBits[0];
}

/**
 * One thread's view of the threads' best scores per search. A slot is written as a seqlock: its
 * search number is cleared first and set last, and a reader keeps what it read only if the number
 * was the search's before and after, so it never mixes two searches' scores.
 */
export class SharedBestScores {
  private readonly threads: number;

  constructor(
    private readonly slots: Int32Array,
    private readonly thread: number,
  ) {
    this.threads = slots.length / (SLOT_SIZE * SLOTS);
  }

  /** Records this thread's best scores for `search`, best first; at most SHARED_SCORES of them. */
  publish(search: number, best: readonly number[]): void {
    const slot = this.slotOf(this.thread, search);
    const count = Math.min(best.length, SHARED_SCORES);
    Atomics.store(this.slots, slot, 0);
    for (let index = 0; index < count; index++) Atomics.store(this.slots, slot + 2 + index, bitsBelow(best[index]));
    Atomics.store(this.slots, slot + 1, count);
    Atomics.store(this.slots, slot, searchNumber(search));
  }

  /** The best scores the other threads have recorded for `search`, best first (empty while none has). */
  othersBest(search: number): number[] {
    const scores: number[] = [];
    const number = searchNumber(search);
    for (let other = 0; other < this.threads; other++) {
      if (other === this.thread) continue;
      const slot = this.slotOf(other, search);
      if (Atomics.load(this.slots, slot) !== number) continue;
      const count = Atomics.load(this.slots, slot + 1);
      const start = scores.length;
      for (let index = 0; index < count; index++) {
        scratchBits[0] = Atomics.load(this.slots, slot + 2 + index);
        scores.push(scratchScore[0]);
      }
      if (Atomics.load(this.slots, slot) !== number) scores.length = start;
    }
    return this.threads > 2 ? scores.sort((a, b) => b - a) : scores;
  }

  private slotOf(thread: number, search: number): number {
    return (thread * SLOTS + (search % SLOTS)) * SLOT_SIZE;
  }
}

/** Never 0, which marks a slot being written. */
function searchNumber(search: number): number {
  return (search % 0x7fffffff) + 1;
}
