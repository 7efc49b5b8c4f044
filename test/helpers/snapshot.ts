import type { Engine, EngineOptions } from '../../src/engine/engine';
import { unwrap } from '../../src/engine/util/result';
import { openEngine, type Scratch } from './workspace';

/**
 * Everything an index holds, in a canonical order: two stores with equal snapshots answer every
 * query the same way. Used to check that incremental updates equal a fresh index.
 */
export async function storeSnapshot(engine: Engine): Promise<unknown> {
  const { store, graph } = engine;
  const ids = [...store.catalog.keys()].sort();
  const chunks = ids.map((id) => ({
    ...store.catalog.get(id),
    text: unwrap(store.texts.read(id)),
  }));
  const facts = [...(await store.tables.allFacts())].sort((a, b) => a.id.localeCompare(b.id));
  const graphCallers = facts.map(
    (fact) =>
      [
        fact.id,
        graph
          .callers(fact.id)
          .map((c) => `${c.callerId}@${c.site.line}`)
          .sort(),
      ] as const,
  );
  const lexical = [...store.lexical.documents()]
    .map((doc) => ({ ...doc, terms: [...doc.terms].sort((a, b) => a[0].localeCompare(b[0])) }))
    .sort((a, b) => a.chunkId.localeCompare(b.chunkId));
  const files = Object.fromEntries(
    Object.entries(store.manifest.files).map(([file, entry]) => [
      file,
      { hash: entry.hash, language: entry.language, skipped: entry.skipped, chunks: entry.chunks },
    ]),
  );
  return {
    chunks,
    facts,
    graphCallers,
    lexical,
    vocabulary: [...store.lexical.vocabulary()].sort(),
    files,
  };
}

/** The snapshot of a fresh index of `root`: what an incrementally updated store must equal. */
export async function freshSnapshot(
  scratch: Scratch,
  root: string,
  options: Partial<EngineOptions> = {},
): Promise<unknown> {
  const fresh = await openEngine(scratch, root, options);
  try {
    unwrap(await fresh.index());
    return await storeSnapshot(fresh);
  } finally {
    fresh.dispose();
  }
}
