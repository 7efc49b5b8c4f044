/**
 * Ids grouped by a key (a name, an exception type), each group in the order its ids were added,
 * as a Map of Sets keeps them. Most keys hold one id (a name defined once, a name called from one
 * definition), so a lone id is kept as itself and a Set is made only for a second one: at 200k
 * definitions the Sets of one id took tens of MB.
 */
export class IdsByKey {
  private readonly groups = new Map<string, string | Set<string>>();

  add(key: string, id: string): void {
    const held = this.groups.get(key);
    if (held === undefined) this.groups.set(key, id);
    else if (typeof held !== 'string') held.add(id);
    else if (held !== id) this.groups.set(key, new Set([held, id]));
  }

  remove(key: string, id: string): void {
    const held = this.groups.get(key);
    if (held === undefined) return;
    if (typeof held === 'string') {
      if (held === id) this.groups.delete(key);
      return;
    }
    held.delete(id);
    if (held.size === 1) this.groups.set(key, held.values().next().value!);
  }

  /** The ids under `key`, oldest first. */
  get(key: string): Iterable<string> {
    const held = this.groups.get(key);
    if (held === undefined) return [];
    return typeof held === 'string' ? [held] : held;
  }

  count(key: string): number {
    const held = this.groups.get(key);
    if (held === undefined) return 0;
    return typeof held === 'string' ? 1 : held.size;
  }
}
