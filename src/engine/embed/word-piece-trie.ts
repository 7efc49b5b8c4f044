/**
 * The vocabulary entries made of ASCII characters other than capital letters, as a trie over
 * their characters, for pieces of ASCII text matched as lowercased: the longest entry a piece
 * holds from a given position is found in one walk forward, a step per character, where looking
 * up every shorter slice from the longest down cut a string and hashed it for each length. An
 * entry with a capital or a non-ASCII character can never match a lowercased ASCII piece, so it
 * is left out.
 *
 * The trie's edges are one map from (node, character) to the child node, keyed by a number:
 * no object per node, and a fraction of the size of a table of 128 children per node.
 */
const SYMBOLS = 128;
const NO_ID = -1;

/** The character code, capitals lowercased; -1 for a character outside ASCII. */
function symbolOf(code: number): number {
  if (code >= 65 && code <= 90) return code + 32;
  return code < SYMBOLS ? code : -1;
}

/** Whether `entry` can match a lowercased ASCII piece: ASCII, and no capital letter. */
function matchable(entry: string): boolean {
  for (let at = 0; at < entry.length; at++)
    if (symbolOf(entry.charCodeAt(at)) !== entry.charCodeAt(at)) return false;
  return true;
}

export class WordPieceTrie {
  private readonly children = new Map<number, number>();
  /** The vocabulary id of the entry each node ends, or NO_ID. */
  private readonly ids: Int32Array;
  private nodes = 1;

  constructor(entries: Iterable<readonly [string, number]>) {
    const ids: number[] = [NO_ID];
    for (const [entry, id] of entries) {
      const node = this.insert(entry, ids);
      if (node !== null) ids[node] = id;
    }
    this.ids = Int32Array.from(ids);
  }

  /**
   * The end of the longest entry that `word` (matched as lowercased) holds from `start`, and
   * that entry's id; null when it holds none there.
   */
  longestFrom(word: string, start: number): { end: number; id: number } | null {
    let node = 0;
    let found: { end: number; id: number } | null = null;
    for (let at = start; at < word.length; at++) {
      const symbol = symbolOf(word.charCodeAt(at));
      if (symbol < 0) break;
      const child = this.children.get(node * SYMBOLS + symbol);
      if (child === undefined) break;
      node = child;
      const id = this.ids[node]!;
      if (id !== NO_ID) found = { end: at + 1, id };
    }
    return found;
  }

  /** The node that ends `entry`, added as needed; null for an entry this trie leaves out. */
  private insert(entry: string, ids: number[]): number | null {
    if (!matchable(entry)) return null;
    let node = 0;
    for (let at = 0; at < entry.length; at++) {
      const key = node * SYMBOLS + symbolOf(entry.charCodeAt(at));
      let child = this.children.get(key);
      if (child === undefined) {
        child = this.nodes++;
        ids.push(NO_ID);
        this.children.set(key, child);
      }
      node = child;
    }
    return node;
  }
}
