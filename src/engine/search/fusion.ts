/**
 * Weighted reciprocal rank fusion (Cormack et al., 2009): a chunk's score is the weighted sum of
 * 1 / (k + rank) over the lists it appears in. A chunk missing from a retrieval list (lexical,
 * semantic: lists cut at the same length) counts at rank length + 1 there, just behind the list; a
 * chunk missing from an evidence list (symbols named, messages quoted) gets nothing from it, since
 * such a list is short because only a few chunks qualify, and counting the rest just behind them
 * would erase the difference. k = 60 controls how much rank 1 differs from rank 2; it does not scale with
 * the corpus. What scales is top-k: about 1% of the chunks, at least 5, at most 20.
 */
export const RRF_K = 60;

export interface RankedList {
  readonly ids: readonly string[];
  readonly weight: number;
  /** Evidence lists give chunks missing from them nothing; retrieval lists rank them last. */
  readonly kind?: 'retrieval' | 'evidence';
}

export interface FusedHit {
  readonly id: string;
  readonly score: number;
  /** 1-based rank in each input list, or null when absent. */
  readonly ranks: readonly (number | null)[];
}

export function weightedRrf(lists: readonly RankedList[], k = RRF_K): FusedHit[] {
  // one entry per chunk, its ranks filled list by list (a map per list and a set of every id, as
  // before, were most of what fusing twice a question allocated)
  const rankings = new Map<string, (number | null)[]>();
  const sizes = lists.map((list, i) => {
    let distinct = 0;
    list.ids.forEach((id, index) => {
      let ranks = rankings.get(id);
      if (!ranks) rankings.set(id, (ranks = new Array<number | null>(lists.length).fill(null)));
      if (ranks[i] !== null) return;
      ranks[i] = index + 1;
      distinct++;
    });
    return distinct;
  });
  const fused: FusedHit[] = [];
  for (const [id, ranks] of rankings) {
    let score = 0;
    for (let i = 0; i < lists.length; i++) {
      const list = lists[i]!;
      const rank = ranks[i] ?? (list.kind === 'evidence' ? null : sizes[i]! + 1);
      if (rank !== null) score += list.weight / (k + rank);
    }
    fused.push({ id, score, ranks });
  }
  return fused.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

export function computeTopK(totalChunks: number): number {
  return Math.max(5, Math.min(20, Math.floor(totalChunks / 100)));
}

/** How much of a file's standing each of its chunks inherits, and the decay over the file's hits. */
const GROUP_SHARE = 0.3;
const GROUP_DECAY = 0.5;

/**
 * Chunks gain from their file's standing: the best fused scores among its chunks, decayed (best +
 * half the second + a quarter of the third …). A chunk in a file that several retrievers point
 * into rises above an isolated match in a file nothing else points at.
 */
export function boostByGroup(
  fused: readonly FusedHit[],
  groupOf: (id: string) => string | null,
  share = GROUP_SHARE,
): FusedHit[] {
  // each hit's group looked up once: fused lists are hundreds of hits, fused twice a question
  const groups = fused.map((hit) => groupOf(hit.id));
  const standing = new Map<string, { total: number; weight: number }>();
  fused.forEach((hit, i) => {
    const group = groups[i];
    if (!group) return;
    const entry = standing.get(group) ?? { total: 0, weight: 1 };
    entry.total += hit.score * entry.weight;
    entry.weight *= GROUP_DECAY;
    standing.set(group, entry);
  });
  return fused
    .map((hit, i) => {
      const group = groups[i];
      return group ? { ...hit, score: hit.score + share * standing.get(group)!.total } : hit;
    })
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

/**
 * `extra` woven into `order`: the first `keep` ids of `order` stay where they are, then one id of
 * `extra` follows every `every` ids of the rest, and what is left of `extra` comes last. An id
 * appears once, at its first place.
 */
export function weaveIn(
  order: readonly string[],
  extra: readonly string[],
  keep: number,
  every: number,
): string[] {
  const woven = new Set<string>(order.slice(0, keep));
  const pending = extra.values();
  const takeExtra = () => {
    for (let next = pending.next(); !next.done; next = pending.next()) {
      if (!woven.has(next.value)) return woven.add(next.value);
    }
    return woven;
  };
  order.slice(keep).forEach((id, index) => {
    woven.add(id);
    if ((index + 1) % every === 0) takeExtra();
  });
  for (const id of pending) woven.add(id);
  return [...woven];
}
