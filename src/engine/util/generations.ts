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

  /**
   * `capacity` of one generation, in the units `costOf` gives a key (1 each when absent). `own`
   * gives the key as the memo keeps it (and hands to `get`'s `compute`): a string key cut from a
   * longer text may hold that whole text in memory, which its cost does not count (see detached).
   */
  constructor(
    private readonly capacity: number,
    private readonly costOf: (key: K) => number = () => 1,
    private readonly own: (key: K) => K = (key) => key,
  ) {}

  /** The value kept for `key`, or `compute(key)` kept from now on. */
  get(key: K, compute: (key: K) => V): V {
    let value = this.current.get(key);
    if (value !== undefined) return value;
    const kept = this.own(key);
    value = this.previous.get(key);
    if (value === undefined) value = compute(kept);
    const cost = this.costOf(key);
    if (this.held + cost > this.capacity && this.held > 0) {
      this.previous = this.current;
      this.current = new Map();
      this.held = 0;
    }
    this.current.set(kept, value);
    this.held += cost;
    return value;
  }
}

/**
 * A copy of `text` that holds no longer string in memory. A string cut from another (a line of a
 * chunk's text, split off it) may be kept by V8 as a view on it, so a memo of lines would keep
 * every text one of its lines came from. Joined to another string and cut again, the text is
 * copied into a string of its own length: what the copy can hold is the copy.
 */
export function detached(text: string): string {
  return ` ${text}`.slice(1);
}
