/**
 * The token ids of the pieces of text (words, punctuation marks) a static model has encoded,
 * found from the text a piece is in: by its place there and its characters' `fnv1a` (taken
 * where they stand), so a piece is cut out of the text only when it is new.
 * Every piece was cut out to be looked up in a Map: with the pieces met for the first time, 450
 * MB of a first index's garbage at 10k files; without the ones met before, 350 MB.
 *
 * Open addressing, at most half full, grown by doubling up to `limit` pieces; past that it
 * starts again empty (code repeats its words, so the pieces a workspace uses come back soon).
 */
export class PieceCache {
  private keys: (string | undefined)[] = new Array<string | undefined>(INITIAL_SLOTS);
  private values: (readonly number[] | undefined)[] = new Array<readonly number[] | undefined>(
    INITIAL_SLOTS,
  );
  private hashes = new Int32Array(INITIAL_SLOTS);
  private count = 0;

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.count;
  }

  /** The ids kept for `text[start, end)`, whose fnv1a is `hash`; undefined when none are. */
  find(text: string, start: number, end: number, hash: number): readonly number[] | undefined {
    const mask = this.keys.length - 1;
    const length = end - start;
    for (let at = slotOf(hash) & mask; ; at = (at + 1) & mask) {
      const key = this.keys[at];
      if (key === undefined) return undefined;
      if (this.hashes[at] === hash && key.length === length && text.startsWith(key, start))
        return this.values[at];
    }
  }

  /**
   * Keeps `ids` for `piece` (whose fnv1a is `hash`; not kept yet). The piece should be a
   * string of its own, not a view on a longer text, which it would keep alive.
   */
  keep(piece: string, hash: number, ids: readonly number[]): void {
    if (this.count >= this.limit) this.clear();
    if ((this.count + 1) * 2 > this.keys.length) this.grow();
    this.place(piece, hash, ids);
    this.count++;
  }

  clear(): void {
    this.keys = new Array<string | undefined>(INITIAL_SLOTS);
    this.values = new Array<readonly number[] | undefined>(INITIAL_SLOTS);
    this.hashes = new Int32Array(INITIAL_SLOTS);
    this.count = 0;
  }

  private grow(): void {
    const { keys, values, hashes } = this;
    this.keys = new Array<string | undefined>(keys.length * 2);
    this.values = new Array<readonly number[] | undefined>(keys.length * 2);
    this.hashes = new Int32Array(keys.length * 2);
    for (let at = 0; at < keys.length; at++)
      if (keys[at] !== undefined) this.place(keys[at]!, hashes[at]!, values[at]!);
  }

  private place(piece: string, hash: number, ids: readonly number[]): void {
    const mask = this.keys.length - 1;
    let at = slotOf(hash) & mask;
    while (this.keys[at] !== undefined) at = (at + 1) & mask;
    this.keys[at] = piece;
    this.values[at] = ids;
    this.hashes[at] = hash;
  }
}

const INITIAL_SLOTS = 1024;

/** Spreads a hash's high bits into the low ones the slots are chosen by. */
function slotOf(hash: number): number {
  return (hash ^ (hash >>> 15)) >>> 0;
}
