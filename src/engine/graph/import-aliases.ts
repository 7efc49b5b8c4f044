import type { ImportBinding } from '../model';

/**
 * The local names imports give other names (`from .d import g as h`, `import { g as h } from
 * './d'`). A call to `h` is listed among the callers of the name `h`, not `g`: when a definition
 * of `g` comes, changes or goes, the calls that reach it as `h` must be resolved again too.
 * Counted, since several files may import one name under the same alias.
 */
export class ImportAliases {
  private readonly byImported = new Map<string, Map<string, number>>();

  /** Records the aliases of a module's imports. */
  add(imports: readonly ImportBinding[]): void {
    for (const { imported, local } of aliasing(imports)) {
      let locals = this.byImported.get(imported);
      if (!locals) this.byImported.set(imported, (locals = new Map()));
      locals.set(local, (locals.get(local) ?? 0) + 1);
    }
  }

  /** Forgets the aliases of a module's imports, as `add` recorded them. */
  remove(imports: readonly ImportBinding[]): void {
    for (const { imported, local } of aliasing(imports)) {
      const locals = this.byImported.get(imported);
      const count = locals?.get(local);
      if (!locals || count === undefined) continue;
      if (count > 1) locals.set(local, count - 1);
      else if (locals.delete(local) && !locals.size) this.byImported.delete(imported);
    }
  }

  /**
   * Every other name a chain of imports gives `name`: `g` imported as `f`, and that `f` imported
   * elsewhere as `h`, gives `f` and `h`.
   */
  of(name: string): readonly string[] {
    if (!this.byImported.has(name)) return NONE;
    const found = new Set([name]);
    const queue = [name];
    for (let at = 0; at < queue.length; at++)
      for (const local of this.byImported.get(queue[at]!)?.keys() ?? [])
        if (!found.has(local)) {
          found.add(local);
          queue.push(local);
        }
    return queue.slice(1);
  }
}

const NONE: readonly string[] = [];

function* aliasing(
  imports: readonly ImportBinding[],
): Generator<{ readonly imported: string; readonly local: string }> {
  for (const { imported, local } of imports)
    if (imported !== null && imported !== local) yield { imported, local };
}
