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
      if (typeof held === 'number') {
        if (slots.has(held)) this.groups.delete(key);
        continue;
      }
      const left = removeSlots(held, slots);
      if (!left) this.groups.delete(key);
      else if (left === 1) this.groups.set(key, held[0]!);
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

/**
 * Takes `slots` out of `group` in place, the rest keeping its order; returns how many are left.
 * Looks from the end: a file saved before had its slots added last, so in a group of tens of
 * thousands (the callers of a common name at 100k files) only the tail after them moves.
 */
function removeSlots(group: number[], slots: ReadonlySet<number>): number {
  let found = 0;
  let earliest = group.length;
  for (let at = group.length - 1; at >= 0 && found < slots.size; at--)
    if (slots.has(group[at]!)) {
      found++;
      earliest = at;
    }
  let to = earliest;
  for (let at = earliest; at < group.length; at++)
    if (!slots.has(group[at]!)) group[to++] = group[at]!;
  group.length = to;
  return to;
}
