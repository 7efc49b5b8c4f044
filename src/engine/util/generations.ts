/**
 * A memo of a pure function's results, bounded, kept in two generations: when the current one is
 * full it becomes the old one (the one before it is dropped), and a key found in the old one moves
 * to the current. What was used lately survives a turn of generations, where emptying one full
 * map lost everything at once, and no entry is removed on its own (a map walks past the holes
 * removals leave at its start until it is rebuilt).
 */
export class Generations<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();
  private held = 0;

  /** `capacity` of one generation, in the units `costOf` gives a key (1 each when absent). */
  constructor(
    private readonly capacity: number,
    private readonly costOf: (key: K) => number = () => 1,
  ) {}

  /** The value kept for `key`, or `compute(key)` kept from now on. */
  get(key: K, compute: (key: K) => V): V {
    let value = this.current.get(key);
    if (value !== undefined) return value;
    value = this.previous.get(key);
    if (value === undefined) value = compute(key);
    const cost = this.costOf(key);
    if (this.held + cost > this.capacity && this.held > 0) {
      this.previous = this.current;
      this.current = new Map();
      this.held = 0;
    }
    this.current.set(key, value);
    this.held += cost;
    return value;
  }
}
