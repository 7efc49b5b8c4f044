/**
 * Weighted reciprocal rank fusion (Cormack et al., 2009): a chunk's score is the weighted sum of
 * 1 / (k + rank) over the lists it appears in; a chunk missing from a list counts at rank
 * length + 1 there. k = 60 controls how much rank 1 differs from rank 2; it does not scale with
 * the corpus. What scales is top-k: about 1% of the chunks, at least 5, at most 20.
 */
export const RRF_K = 60;

export interface RankedList {
  readonly ids: readonly string[];
  readonly weight: number;
}

export interface FusedHit {
  readonly id: string;
  readonly score: number;
  /** 1-based rank in each input list, or null when absent. */
  readonly ranks: readonly (number | null)[];
}

export function weightedRrf(lists: readonly RankedList[], k = RRF_K): FusedHit[] {
  const positions = lists.map((list) => {
    const map = new Map<string, number>();
    list.ids.forEach((id, index) => {
      if (!map.has(id)) map.set(id, index + 1);
    });
    return map;
  });
  const all = new Set(lists.flatMap((list) => list.ids));
  const fused: FusedHit[] = [];
  for (const id of all) {
    const ranks = positions.map((map) => map.get(id) ?? null);
    const score = lists.reduce((sum, list, i) => sum + list.weight / (k + (ranks[i] ?? positions[i]!.size + 1)), 0);
    fused.push({ id, score, ranks });
  }
  return fused.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

export function computeTopK(totalChunks: number): number {
  return Math.max(5, Math.min(20, Math.floor(totalChunks / 100)));
}
