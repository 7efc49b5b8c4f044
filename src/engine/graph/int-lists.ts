const EMPTY = new Int32Array(0);
/** How much more than it must hold a grown arena holds. */
export const GROWTH = 1.25;
/** Spare and abandoned room, as a share of the numbers held, past which `trim` packs the arena. */
const TRIM_WASTE = 0.5;
/**
 * Room an arena sized to what it holds keeps spare, as a share of it: the saves after opening a
 * store fill it, and the arena is not copied at the first of them (at 100k files a copy of the
 * call sites is 60 MB, and the collection such an allocation brings on took most of a second).
 */
const SPARE = 1 / 16;

/**
 * A list of numbers per slot, all in one arena: at 10k files half a million resolved calls, kept
 * as an array per caller and per target, took about 24 MB of heap; here they take 8 bytes a call
 * each way. A replaced or cleared list's room is reclaimed when the arena would otherwise grow,
 * and `trim` gives back spare room after a large update.
 */
export class IntLists {
  private arena = new Int32Array(64);
  private used = 0;
  private abandoned = 0;
  /** Where each slot's list starts in the arena, -1 for a slot holding none. */
  private start = new Int32Array(256).fill(-1);
  private length = new Int32Array(256);

  /**
   * The list of `slot` (empty when it has none), as a view on the arena: valid until the next
   * `set` or `trim`, which may move the arena.
   */
  get(slot: number): Int32Array {
    if (slot >= this.start.length || this.start[slot]! < 0) return EMPTY;
    const from = this.start[slot]!;
    return this.arena.subarray(from, from + this.length[slot]!);
  }

  /** How many numbers the lists hold together. */
  get size(): number {
    return this.used - this.abandoned;
  }

  has(slot: number): boolean {
    return slot < this.start.length && this.start[slot]! >= 0;
  }

  /** Number `index` of the list of `slot`, read without a view (the caller knows the list's size). */
  valueAt(slot: number, index: number): number {
    return this.arena[this.start[slot]! + index]!;
  }

  /** How many numbers the list of `slot` holds. */
  sizeOf(slot: number): number {
    return slot < this.length.length ? this.length[slot]! : 0;
  }

  /** Makes `values` the list of `slot`; an empty list is none. */
  set(slot: number, values: ArrayLike<number>): void {
    this.write(slot, values.length, (arena, at) => arena.set(values, at));
  }

  /**
   * Makes the list of `slot` `size` numbers that `fill` writes into the arena from `at`, so a caller
   * packing records (several numbers each) writes them in place; an empty list is none. A list no
   * longer than the one it replaces takes its room: a save rewrites the lists of every function its
   * file calls, most of them as long as before, and at the arena's end they filled its spare room
   * within a few saves, each fill a copy of the whole arena (20 ms at 10k files).
   */
  write(slot: number, size: number, fill: (arena: Int32Array, at: number) => void): void {
    if (size && size <= this.sizeOf(slot)) {
      fill(this.arena, this.start[slot]!);
      this.abandoned += this.length[slot]! - size;
      this.length[slot] = size;
      return;
    }
    this.clear(slot);
    if (!size) return;
    this.grow(slot);
    this.reserve(size);
    fill(this.arena, this.used);
    this.start[slot] = this.used;
    this.length[slot] = size;
    this.used += size;
  }

  /** The room at the arena's end that writing a list of `size` numbers for `slot` takes. */
  roomFor(slot: number, size: number): number {
    return size <= this.sizeOf(slot) ? 0 : size;
  }

  clear(slot: number): void {
    if (slot >= this.start.length || this.start[slot]! < 0) return;
    this.abandoned += this.length[slot]!;
    this.start[slot] = -1;
    this.length[slot] = 0;
  }

  /**
   * Packs the arena to its size (and SPARE) once its spare and abandoned room pass half of what it
   * holds (a large update removed much). Not sooner: the room a grown arena keeps spare is what
   * the next small updates (saves) fill without copying the whole arena.
   */
  trim(): void {
    const live = this.used - this.abandoned;
    if (this.arena.length - live > live * TRIM_WASTE && this.arena.length > 64)
      this.pack(withSpare(live));
  }

  /**
   * Makes room for `size` more numbers at once: a large update (opening a store) then fills the
   * arena without growing it step by step, each step a copy of the whole arena. A grown arena
   * is `growth` times as large, so the updates after it append into spare room: each copy
   * of the arena comes after many updates, not with each. `growth` 1 sizes it to what it must
   * hold (and SPARE), for an update that knows everything it will add (opening a store).
   */
  reserve(size: number, growth = GROWTH): void {
    if (this.used + size <= this.arena.length) return;
    const live = this.used - this.abandoned;
    // one copy either way: the abandoned room is dropped when it is much, or when the grown arena
    // would hold so much spare room that the update's `trim` would pack it again (a second copy)
    const needed = live + size;
    const grown = Math.max(withSpare(this.used + size), Math.ceil(this.arena.length * growth));
    if (this.abandoned >= this.used / 2 || grown - needed > needed * TRIM_WASTE)
      return this.pack(Math.max(withSpare(needed), Math.ceil(needed * growth)));
    const arena = new Int32Array(grown);
    arena.set(this.arena.subarray(0, this.used));
    this.arena = arena;
  }

  /** Moves every slot's list end to end into an arena of `capacity` numbers (at least all of them). */
  private pack(capacity: number): void {
    const arena = new Int32Array(Math.max(64, capacity, this.used - this.abandoned));
    let at = 0;
    for (let slot = 0; slot < this.start.length; slot++) {
      const from = this.start[slot]!;
      if (from < 0) continue;
      const length = this.length[slot]!;
      arena.set(this.arena.subarray(from, from + length), at);
      this.start[slot] = at;
      at += length;
    }
    this.arena = arena;
    this.used = at;
    this.abandoned = 0;
  }

  private grow(slot: number): void {
    if (slot < this.start.length) return;
    const size = Math.max(slot + 1, this.start.length * 2);
    const start = new Int32Array(size).fill(-1);
    start.set(this.start);
    this.start = start;
    const length = new Int32Array(size);
    length.set(this.length);
    this.length = length;
  }
}

function withSpare(size: number): number {
  return Math.ceil(size * (1 + SPARE));
}
