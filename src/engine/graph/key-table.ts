const EMPTY = -1;
const MIN_CAPACITY = 16;

/**
 * A hash table from three numbers to a number (a fact's slot), in typed arrays with linear
 * probing. The graph's per-file lookups (a file's definition by qualified name, its top-level
 * names, a class's members, nested functions) were a Map per file and per kind keyed by strings
 * such as `Class\0name`: at 10k files 47k Maps, 400k entries and 140k key strings. Keyed by the
 * numbers of the file and the names, they take 16 bytes an entry here, with no key strings.
 */
export class KeyTable {
  private keys = new Int32Array(MIN_CAPACITY * 3);
  private values = new Int32Array(MIN_CAPACITY).fill(EMPTY);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The value under (a, b, c), or -1 when there is none. */
  get(a: number, b: number, c = 0): number {
    const mask = this.values.length - 1;
    for (let at = hash(a, b, c) & mask; ; at = (at + 1) & mask) {
      const value = this.values[at]!;
      if (value === EMPTY || this.holds(at, a, b, c)) return value;
    }
  }

  /** Puts `value` (never negative) under (a, b, c), replacing what was there. */
  set(a: number, b: number, c: number, value: number): void {
    if ((this.count + 1) * 4 > this.values.length * 3) this.resize(this.values.length * 2);
    const mask = this.values.length - 1;
    let at = hash(a, b, c) & mask;
    while (this.values[at] !== EMPTY && !this.holds(at, a, b, c)) at = (at + 1) & mask;
    if (this.values[at] === EMPTY) this.count++;
    this.keys[at * 3] = a;
    this.keys[at * 3 + 1] = b;
    this.keys[at * 3 + 2] = c;
    this.values[at] = value;
  }

  /** Removes (a, b, c); the entries probed past it move back, so no tombstones are left. */
  delete(a: number, b: number, c = 0): void {
    const mask = this.values.length - 1;
    let at = hash(a, b, c) & mask;
    for (; ; at = (at + 1) & mask) {
      if (this.values[at] === EMPTY) return;
      if (this.holds(at, a, b, c)) break;
    }
    this.count--;
    let hole = at;
    for (let next = (hole + 1) & mask; this.values[next] !== EMPTY; next = (next + 1) & mask) {
      const home =
        hash(this.keys[next * 3]!, this.keys[next * 3 + 1]!, this.keys[next * 3 + 2]!) & mask;
      // the entry at `next` may fill the hole only if its home is not between the hole and it
      const between = hole <= next ? home > hole && home <= next : home > hole || home <= next;
      if (between) continue;
      this.keys.copyWithin(hole * 3, next * 3, next * 3 + 3);
      this.values[hole] = this.values[next]!;
      hole = next;
    }
    this.values[hole] = EMPTY;
  }

  private holds(at: number, a: number, b: number, c: number): boolean {
    return this.keys[at * 3] === a && this.keys[at * 3 + 1] === b && this.keys[at * 3 + 2] === c;
  }

  private resize(capacity: number): void {
    const { keys, values } = this;
    this.keys = new Int32Array(capacity * 3);
    this.values = new Int32Array(capacity).fill(EMPTY);
    this.count = 0;
    for (let at = 0; at < values.length; at++)
      if (values[at] !== EMPTY)
        this.set(keys[at * 3]!, keys[at * 3 + 1]!, keys[at * 3 + 2]!, values[at]!);
  }
}

function hash(a: number, b: number, c: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) ^ Math.imul(c + 1, 0xc2b2ae35);
  return (h ^ (h >>> 13)) >>> 0;
}
