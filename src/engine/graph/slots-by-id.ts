/**
 * Fact slots found by the hash of their id, and listed in the order they were added. The ids
 * themselves are not kept: a fact's id is its path and qualified name (see `StoredFact.id`), and a
 * lookup compares the candidates of one hash through `matches`. A `Map` from id to slot held about
 * 7 MB of table and, through its keys, 16 MB of id strings at 200k definitions; here a slot takes
 * four numbers and the hash buckets one or two.
 *
 * Candidates of one hash are chained through `nextSameHash`; the order of addition is a doubly
 * linked list through `before`/`after`, so removing a slot and adding it again moves it to the
 * end, as deleting and setting a `Map` key does.
 */
export class SlotsById {
  /** The first slot of each bucket's chain, -1 for none; a power of two long. */
  private buckets = new Int32Array(1024).fill(-1);
  private hashes = new Int32Array(0);
  private nextSameHash = new Int32Array(0);
  private before = new Int32Array(0);
  private after = new Int32Array(0);
  /** Whether each slot is held: 1 held, 0 free. */
  private held = new Uint8Array(0);
  private first = -1;
  private last = -1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The slot whose id hashes to `hash` and which `matches` accepts, or undefined. */
  find(hash: number, matches: (slot: number) => boolean): number | undefined {
    for (let slot = this.buckets[hash & (this.buckets.length - 1)]!; slot >= 0;) {
      if (this.hashes[slot] === hash && matches(slot)) return slot;
      slot = this.nextSameHash[slot]!;
    }
    return undefined;
  }

  has(slot: number): boolean {
    return slot < this.held.length && this.held[slot] === 1;
  }

  /** Files `slot` under `hash`, last in order; a slot already held keeps its place. */
  add(slot: number, hash: number): void {
    if (this.has(slot)) return;
    this.ensureRoom(slot);
    if ((this.count + 1) * 2 > this.buckets.length) this.rehash(this.buckets.length * 2);
    this.held[slot] = 1;
    this.hashes[slot] = hash;
    this.chain(slot);
    this.before[slot] = this.last;
    this.after[slot] = -1;
    if (this.last >= 0) this.after[this.last] = slot;
    else this.first = slot;
    this.last = slot;
    this.count++;
  }

  remove(slot: number): void {
    if (!this.has(slot)) return;
    const bucket = this.hashes[slot]! & (this.buckets.length - 1);
    if (this.buckets[bucket] === slot) this.buckets[bucket] = this.nextSameHash[slot]!;
    else {
      let at = this.buckets[bucket]!;
      while (this.nextSameHash[at] !== slot) at = this.nextSameHash[at]!;
      this.nextSameHash[at] = this.nextSameHash[slot]!;
    }
    const before = this.before[slot]!;
    const after = this.after[slot]!;
    if (before >= 0) this.after[before] = after;
    else this.first = after;
    if (after >= 0) this.before[after] = before;
    else this.last = before;
    this.held[slot] = 0;
    this.count--;
  }

  /**
   * Every held slot, in the order added, as one array: a generator made an object for each slot,
   * and at 100k files a pass over a million facts left tens of MB for the collector.
   */
  slots(): Int32Array {
    const out = new Int32Array(this.count);
    let at = 0;
    for (let slot = this.first; slot >= 0; slot = this.after[slot]!) out[at++] = slot;
    return out;
  }

  private chain(slot: number): void {
    const bucket = this.hashes[slot]! & (this.buckets.length - 1);
    this.nextSameHash[slot] = this.buckets[bucket]!;
    this.buckets[bucket] = slot;
  }

  private rehash(size: number): void {
    this.buckets = new Int32Array(size).fill(-1);
    for (let slot = 0; slot < this.held.length; slot++) if (this.held[slot]) this.chain(slot);
  }

  /** Grows the per-slot columns to hold `slot`, doubling. */
  private ensureRoom(slot: number): void {
    if (slot < this.held.length) return;
    const size = Math.max(slot + 1, this.held.length * 2, 256);
    const grown = <T extends Int32Array | Uint8Array>(from: T, make: (n: number) => T): T => {
      const to = make(size);
      to.set(from);
      return to;
    };
    this.hashes = grown(this.hashes, (n) => new Int32Array(n));
    this.nextSameHash = grown(this.nextSameHash, (n) => new Int32Array(n));
    this.before = grown(this.before, (n) => new Int32Array(n));
    this.after = grown(this.after, (n) => new Int32Array(n));
    this.held = grown(this.held, (n) => new Uint8Array(n));
  }
}
