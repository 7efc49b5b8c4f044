/**
 * Fact slots grouped by a numbered key (a name, an exception type), each group in the order its
 * slots were added. Most keys hold one slot (a name defined once, a name called from one
 * definition), kept as the number itself; larger groups are plain arrays of numbers. At 200k
 * definitions and a million calls, Sets of id strings took tens of MB.
 *
 * A slot is added to a key once until it is removed; adding it again right after (a definition
 * calling one name several times) does nothing. Removals wait for `flush`, which filters each
 * group that lost slots once: a large update removes many callers of a common name, and taking
 * them out one by one would scan its group each time.
 */
export class SlotsByKey {
  private readonly groups = new Map<number, number | number[]>();
  private readonly leaving = new Map<number, Set<number>>();
  /** Keys whose groups grew since the last `trim`: arrays grown by pushing keep spare room. */
  private readonly grown = new Set<number>();

  add(key: number, slot: number): void {
    const held = this.groups.get(key);
    if (held === undefined) this.groups.set(key, slot);
    else if (typeof held === 'number') {
      if (held !== slot) {
        this.groups.set(key, [held, slot]);
        this.grown.add(key);
      }
    } else if (held[held.length - 1] !== slot) {
      held.push(slot);
      this.grown.add(key);
    }
  }

  /** Copies the groups grown since the last trim to arrays of their exact length. */
  trim(): void {
    for (const key of this.grown) {
      const held = this.groups.get(key);
      if (held !== undefined && typeof held !== 'number') this.groups.set(key, held.slice());
    }
    this.grown.clear();
  }

  /** Takes `slot` out of `key`'s group at the next `flush`. */
  remove(key: number, slot: number): void {
    let slots = this.leaving.get(key);
    if (!slots) this.leaving.set(key, (slots = new Set()));
    slots.add(slot);
  }

  /** Applies the removals made since the last flush. */
  flush(): void {
    for (const [key, slots] of this.leaving) {
      const held = this.groups.get(key);
      if (held === undefined) continue;
      const kept = typeof held === 'number' ? [held] : held;
      const remaining = kept.filter((slot) => !slots.has(slot));
      if (!remaining.length) this.groups.delete(key);
      else this.groups.set(key, remaining.length === 1 ? remaining[0]! : remaining);
    }
    this.leaving.clear();
  }

  /** The slots under `key` (none for an unknown key), oldest first. */
  get(key: number | undefined): readonly number[] {
    const held = key === undefined ? undefined : this.groups.get(key);
    if (held === undefined) return [];
    return typeof held === 'number' ? [held] : held;
  }

  count(key: number | undefined): number {
    const held = key === undefined ? undefined : this.groups.get(key);
    if (held === undefined) return 0;
    return typeof held === 'number' ? 1 : held.length;
  }
}
